"""Customer pages of a booking: the flight hold form, the hold and confirmation page with its
progress, my bookings, cancelling a hold, naming passengers.  Thin: every write is a service
call, and every domain error becomes a message on the page the customer came from.  Ticket
downloads are in `ticket_views`, the gate's scan page in `checkin_views`."""

from __future__ import annotations

import uuid
from datetime import datetime
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from bookings import (
    catalogue,
    customer_holds,
    lifecycle,
    passengers,
    resale_selectors,
    selectors,
    waitlist_selectors,
)
from bookings.models import Booking, BookingStatus, SaleKind
from bookings.templatetags.sales import seat_label
from kernel.errors import DomainError
from payments import selectors as payment_selectors
from payments.models import IN_FLIGHT_PAYMENT_STATUSES, PaymentStatus, RefundStatus
from storefront.forms import HoldForm
from storefront.hold_form import HoldOrder, hold_from_form, show_domain_error


def local_time(moment: datetime, zone: str) -> datetime:
    """`moment` in the IANA time zone `zone` (an airport's, a venue's)."""
    return moment.astimezone(ZoneInfo(zone))


@require_POST
def hold_create(request: HttpRequest, flight_id: int) -> HttpResponse:
    """A flight's seat picker form: hold the picked seats for the named passengers."""
    # Back to the picker as it was; the picker itself rejects a nonsensical query.
    picker = (
        reverse("flights:seat_picker", args=[flight_id])
        + "?"
        + urlencode(
            {
                "fare": request.POST.get("fare_class", ""),
                "passengers": request.POST.get("passengers", ""),
            }
        )
    )

    def order(flight_id: int, form: HoldForm) -> HoldOrder | None:
        data = form.cleaned_data
        asked = {
            "flight": flight_id,
            "fare": data["fare_class"],
            "class": data["booking_class"],
            "seats": form.seats,
            "names": form.names,
            "exit_row": data["exit_row_confirmed"],
        }
        return asked, lambda: customer_holds.hold_chosen_seats(
            customer=request.user,
            sale_id=selectors.sale_id_of(SaleKind.FLIGHT, flight_id),
            fare_class=data["fare_class"],
            seat_numbers=form.seats,
            # The picker's checkbox asks at once: an exit-row seat only with its conditions
            # confirmed, recorded on the passengers (online check-in then asks nothing).
            conditions_confirmed=data["exit_row_confirmed"],
            confirm_now=True,
            passenger_names=form.names,
            booking_class=data["booking_class"],
        )

    return hold_from_form(
        request,
        back=picker,
        find=lambda: flight_id,
        make_form=lambda flight_id: HoldForm(request.POST),
        sale_id=lambda flight_id: selectors.sale_id_of(SaleKind.FLIGHT, flight_id),
        order=order,
    )


DECLINE_REASONS = {
    "card_declined": gettext_lazy("Your card was declined"),
    "insufficient_funds": gettext_lazy("Your card has insufficient funds"),
    "expired_card": gettext_lazy("Your card has expired"),
    "incorrect_cvc": gettext_lazy("The card's security code is wrong"),
    "processing_error": gettext_lazy("The card could not be processed"),
    "gateway_unavailable": gettext_lazy("The payment provider could not be reached"),
    "authentication_required": gettext_lazy(
        "Your bank asked for a confirmation that was not given"
    ),
}


def decline_reason_text(code: str) -> str:
    """A payment failure code in words for the customer; unknown codes read as a decline."""
    return str(DECLINE_REASONS.get(code or "", DECLINE_REASONS["card_declined"]))


def _page_state(booking: Booking, now) -> dict:
    """What the booking page shows, and a fingerprint of it the page polls for changes while
    something is under way elsewhere (the payment webhook, the ticket worker, a refund)."""
    lapsed = booking.hold_lapsed(now)
    holding = booking.status == BookingStatus.HELD and not lapsed
    payment = payment_selectors.latest_payment(booking_id=booking.pk)
    paying = holding and payment is not None and payment.status in IN_FLIGHT_PAYMENT_STATUSES
    tickets = (
        list(selectors.tickets_for_booking(booking_id=booking.pk))
        # A cancelled booking's tickets stay listed, stamped VOID (their PDFs say so too).
        if booking.status in (BookingStatus.CONFIRMED, BookingStatus.CANCELLED)
        else []
    )
    issuing = booking.status == BookingStatus.CONFIRMED and not tickets
    refunds = list(payment_selectors.refunds_of(booking_id=booking.pk))
    refunding = any(r.status == RefundStatus.PENDING for r in refunds)
    fingerprint = "|".join(
        [
            "EXPIRED" if lapsed else booking.status,
            payment.status if payment else "-",
            str(len(tickets)),
            ",".join(r.status for r in refunds),
        ]
    )
    return {
        # Not yet swept by expire_holds, but no longer payable: show it as expired.
        "lapsed": lapsed,
        "holding": holding,
        "payment": payment,
        "paying": paying,
        "declined": holding and payment is not None and payment.status == PaymentStatus.FAILED,
        "decline_reason": decline_reason_text(payment.failure_reason) if payment else "",
        # Paid after the hold had ended: the seats are gone and the money goes back in full.
        "late_payment": payment is not None
        and booking.confirmed_at is None
        and not holding
        and payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED),
        # Paid while a passenger had no name (a payment started before names were required):
        # refunded in full, and the seats are still held for a named payment.
        "unnamed_payment_refunded": holding
        and payment is not None
        and payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED),
        "tickets": tickets,
        "issuing": issuing,
        "refunds": refunds,
        "poll": paying or issuing or refunding,
        "state": fingerprint,
    }


def _with_sale(bookings):
    """Bookings with their sale and its catalogue item (a flight with its airports, an
    event), so the pages name them without a query per booking."""
    return bookings.select_related(
        *catalogue.owner_paths("sale__"), *catalogue.detail_paths("sale__")
    )


@login_required
def booking_detail(request: HttpRequest, booking_id: int) -> HttpResponse:
    """The hold page while HELD (countdown, pay), the confirmation once CONFIRMED."""
    booking = get_object_or_404(_with_sale(Booking.objects), pk=booking_id, customer=request.user)
    now = timezone.now()
    passengers = booking.passengers_shown(
        booking.passengers.select_related("seat").order_by("seat__seat_no", "id")
    )
    flight = booking.sale.flight if booking.sale.kind == SaleKind.FLIGHT else None
    resale = resale_selectors.latest_resale(booking_id=booking.pk)
    return render(
        request,
        "bookings/detail.html",
        {
            "booking": booking,
            "passengers": passengers,
            "names_missing": any(not p.full_name for p in passengers),
            "price_lines": price_lines(booking, passengers),
            "now": now,
            # A flight's own line (origin, destination, local times); other sales are
            # described by their catalogue (the `sale_summary` tag).
            "departure_local": flight and local_time(flight.departure_at, flight.origin.time_zone),
            "arrival_local": flight and local_time(flight.arrival_at, flight.destination.time_zone),
            # A fresh key per drawing of the page: a double submit of this form is one payment.
            "idempotency_key": uuid.uuid4().hex,
            "resale": resale,
            "resale_listed": resale and resale_selectors.listed_tickets(resale=resale),
            **_page_state(booking, now),
        },
    )


@never_cache
@require_GET
@login_required
def booking_progress(request: HttpRequest, booking_id: int) -> JsonResponse:
    booking = get_object_or_404(Booking, pk=booking_id, customer=request.user)
    return JsonResponse({"state": _page_state(booking, timezone.now())["state"]})


@login_required
def my_bookings(request: HttpRequest) -> HttpResponse:
    bookings = list(
        _with_sale(Booking.objects.filter(customer=request.user))
        .prefetch_related("passengers__seat")
        .order_by("-created_at")
    )
    now = timezone.now()
    for b in bookings:
        b.lapsed = b.hold_lapsed(now)
        if b.sale.kind == SaleKind.FLIGHT:
            b.departure_local = local_time(
                b.sale.flight.departure_at, b.sale.flight.origin.time_zone
            )
    waitlist = waitlist_selectors.waitlist_of(customer=request.user)
    return render(
        request,
        "bookings/my_bookings.html",
        {
            "bookings": bookings,
            "waitlist": waitlist,
            "waitlist_state": waitlist_selectors.waitlist_fingerprint(waitlist),
        },
    )


@require_POST
@login_required
def hold_cancel(request: HttpRequest, booking_id: int) -> HttpResponse:
    try:
        booking = lifecycle.cancel_hold(customer=request.user, booking_id=booking_id)
    except DomainError as error:
        show_domain_error(request, error)
    else:
        seated = [p.seat for p in booking.passengers.select_related("seat") if p.seat]
        # Venue seats are said with commas ("Stalls, row 3, seat 7"): list those with ";".
        venue = any(seat.number is not None for seat in seated)
        seats = ("; " if venue else ", ").join(seat_label(seat) for seat in seated)
        messages.success(
            request, _("Hold cancelled. Seats %(seats)s are free again.") % {"seats": seats}
        )
    return redirect("bookings:mine")


@require_POST
@login_required
def name_passengers(request: HttpRequest, booking_id: int) -> HttpResponse:
    """The hold page's names form: a waitlist offer or a seatless hold is named before paying."""
    names = [n.strip() for n in request.POST.getlist("names")]
    try:
        passengers.name_passengers(customer=request.user, booking_id=booking_id, names=names)
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(request, _("Passenger names saved. You can pay now."))
    return redirect("bookings:detail", booking_id=booking_id)


def price_lines(booking: Booking, passengers: list) -> dict | None:
    """What the total is made of, when seats add surcharges: the fare per place times the
    places, and each seat's surcharge (the total is the booking's own amount, so the lines
    add up to what is charged).  None when there is nothing to break down."""
    surcharged = [p.seat for p in passengers if p.seat is not None and p.seat.surcharge]
    count = booking.seat_count or len(passengers)
    if not surcharged or not count:
        return None
    extras = sum(seat.surcharge for seat in surcharged)
    return {
        "count": count,
        "each": (booking.amount - extras) / count,
        "fare_total": booking.amount - extras,
        "surcharges": surcharged,
    }
