"""Customer pages (holds, bookings), ticket downloads for their owner, and the
gate's scan page.  Thin: every write is a service call, and every domain error becomes a
message on the page the customer came from."""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from math import ceil
from zoneinfo import ZoneInfo

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from bookings import catalogue, selectors, services, waitlist_selectors
from bookings.models import Booking, BookingStatus, SaleKind, Ticket
from bookings.templatetags.sales import seat_label
from bookings.ticket_codes import is_plausible_code
from bookings.ticket_render import qr_png, qr_svg, ticket_pdf
from bookings.tickets import scan_ticket
from kernel.errors import DomainError, IdempotencyKeyInFlight
from kernel.idempotency import clean_key, fingerprint, run_once
from kernel.web.forms import form_errors
from kernel.web.throttles import HoldsThrottle
from payments import selectors as payment_selectors
from payments.models import IN_FLIGHT_PAYMENT_STATUSES, PaymentStatus, RefundStatus
from storefront.forms import HoldForm
from waitroom.errors import WaitingRoomRequired
from waitroom.gate import require_admission


def local_time(moment: datetime, zone: str) -> datetime:
    """`moment` in the IANA time zone `zone` (an airport's, a venue's)."""
    return moment.astimezone(ZoneInfo(zone))


def show_domain_error(request: HttpRequest, error: DomainError) -> None:
    messages.error(request, f"{error.title}. {error.detail}")


@require_POST
def hold_create(request: HttpRequest, flight_id: int) -> HttpResponse:
    form = HoldForm(request.POST)
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
    if not request.user.is_authenticated:
        return redirect_to_login(picker)
    if holds_throttled(request):
        return redirect(picker)
    if not form.is_valid():
        messages.error(request, form_errors(form))
        return redirect(picker)
    try:
        require_admission(
            request=request,
            customer_id=request.user.pk,
            sale_id=selectors.sale_id_of(SaleKind.FLIGHT, flight_id),
        )
    except WaitingRoomRequired as error:
        show_domain_error(request, error)
        return redirect(error.extra["queueUrl"])
    except DomainError as error:  # no such flight
        show_domain_error(request, error)
        return redirect(picker)
    try:
        booking_id = _hold_once(request, flight_id, form)
    except DomainError as error:
        show_domain_error(request, error)
        return redirect(picker)
    return redirect("bookings:detail", booking_id=booking_id)


def holds_throttled(request: HttpRequest) -> bool:
    """The same per-user budget as POST /api/bookings, for every picker page (flights,
    events): many doors, one limit.  True (with a message) when this hold must wait."""
    throttle = HoldsThrottle()
    if throttle.allow_request(request, None):
        return False
    messages.error(
        request,
        _("Too many holds in a short time. Please try again in %(seconds)d seconds.")
        % {"seconds": ceil(throttle.wait() or 1)},
    )
    return True


# How long a second submission of the same form waits for the first to finish.
SAME_FORM_WAIT_SECONDS = 10


def _hold_once(request: HttpRequest, flight_id: int, form: HoldForm) -> int:
    data = form.cleaned_data
    return hold_once(
        request,
        key=data.get("idempotency_key"),
        asked={
            "flight": flight_id,
            "fare": data["fare_class"],
            "seats": form.seats,
            "names": form.names,
        },
        hold=lambda: services.hold_seats(
            customer=request.user,
            sale_id=selectors.sale_id_of(SaleKind.FLIGHT, flight_id),
            fare_class=data["fare_class"],
            seat_numbers=form.seats,
            passenger_names=form.names,
        ),
    )


def hold_once(
    request: HttpRequest, *, key: str | None, asked: dict, hold: Callable[[], Booking]
) -> int:
    """Run `hold` once per drawing of a hold form (every picker's page): a double click or a
    resubmit of the same drawing (same `key`, same `asked`) lands on the booking the first
    submission made.  Returns the booking's id; domain errors of `hold` are raised."""
    key = clean_key(key, required=False)
    if key is None:
        return hold().pk
    asked_fingerprint = fingerprint(asked)
    deadline = time.monotonic() + SAME_FORM_WAIT_SECONDS
    while True:
        try:
            result = run_once(
                customer=request.user,
                scope="page-hold",
                key=key,
                request_fingerprint=asked_fingerprint,
                write=hold,
                answer=lambda booking: (201, {"booking_id": booking.pk}),
            )
            return result.body["booking_id"]
        except IdempotencyKeyInFlight:
            # The first click is still holding: wait for it and show its booking.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


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
    lapsed = booking.status == BookingStatus.HELD and booking.expires_at <= now
    holding = booking.status == BookingStatus.HELD and not lapsed
    payment = payment_selectors.latest_payment(booking_id=booking.pk)
    paying = holding and payment is not None and payment.status in IN_FLIGHT_PAYMENT_STATUSES
    tickets = (
        list(selectors.tickets_for_booking(booking_id=booking.pk))
        if booking.status == BookingStatus.CONFIRMED
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
        "sale__flight__origin", "sale__flight__destination", *catalogue.owner_paths("sale__")
    )


@login_required
def booking_detail(request: HttpRequest, booking_id: int) -> HttpResponse:
    """The hold page while HELD (countdown, pay), the confirmation once CONFIRMED."""
    booking = get_object_or_404(_with_sale(Booking.objects), pk=booking_id, customer=request.user)
    now = timezone.now()
    passengers = list(booking.passengers.select_related("seat").order_by("seat__seat_no", "id"))
    flight = booking.sale.flight if booking.sale.kind == SaleKind.FLIGHT else None
    return render(
        request,
        "bookings/detail.html",
        {
            "booking": booking,
            "passengers": passengers,
            "names_missing": any(not p.full_name for p in passengers),
            "now": now,
            # A flight's own line (origin, destination, local times); other sales are
            # described by their catalogue (the `sale_summary` tag).
            "departure_local": flight and local_time(flight.departure_at, flight.origin.time_zone),
            "arrival_local": flight and local_time(flight.arrival_at, flight.destination.time_zone),
            # A fresh key per drawing of the page: a double submit of this form is one payment.
            "idempotency_key": uuid.uuid4().hex,
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
        b.lapsed = b.status == BookingStatus.HELD and b.expires_at <= now
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
        booking = services.cancel_hold(customer=request.user, booking_id=booking_id)
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
        services.name_passengers(customer=request.user, booking_id=booking_id, names=names)
    except DomainError as error:
        show_domain_error(request, error)
    else:
        messages.success(request, _("Passenger names saved. You can pay now."))
    return redirect("bookings:detail", booking_id=booking_id)


# --- tickets and gate check-in ---------------------------------------------------------------


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-staff get 403, not a login loop."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied(_("Gate check-in is for staff."))
        return view(request, *args, **kwargs)

    return wrapper


def _ticket_or_404(request: HttpRequest, booking_id: int, ticket_id: int):
    try:
        return selectors.access_ticket(
            user=request.user, booking_id=booking_id, ticket_id=ticket_id
        )
    except DomainError as exc:
        raise Http404(exc.detail) from exc


def ticket_file(ticket: Ticket, kind: str) -> HttpResponse:
    """The ticket as a download: "png" / "svg" (the QR code) or "pdf" (the boarding pass, the
    entry ticket: named by its catalogue).

    Shared by these pages and the REST API, so both hand out the same bytes and headers."""
    if kind == "png":
        body, content_type, name = qr_png(ticket.code), "image/png", f"ticket-{ticket.serial}.png"
    elif kind == "svg":
        body, content_type = qr_svg(ticket.code), "image/svg+xml"
        name = f"ticket-{ticket.serial}.svg"
    else:
        body, content_type = ticket_pdf(ticket), "application/pdf"
        name = f"{catalogue.ticket_face(ticket).file_stem}.pdf"
    response = HttpResponse(body, content_type=content_type)
    disposition = "attachment" if kind == "pdf" else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{name}"'
    # A ticket is a bearer credential: keep it out of shared caches.
    response["Cache-Control"] = "private, no-store"
    return response


@require_GET
@login_required
def ticket_qr_png(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "png")


@require_GET
@login_required
def ticket_qr_svg(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "svg")


@require_GET
@login_required
def ticket_pdf_download(request: HttpRequest, booking_id: int, ticket_id: int) -> HttpResponse:
    return ticket_file(_ticket_or_404(request, booking_id, ticket_id), "pdf")


def _gate_kind(request: HttpRequest) -> SaleKind:
    """Which gate the page is: a flight's (the default) or an event's (`?kind=event`)."""
    asked = (request.POST.get("kind") or request.GET.get("kind") or "").upper()
    if asked == SaleKind.EVENT:
        try:
            catalogue.for_kind(SaleKind.EVENT)
        except LookupError:  # no events catalogue in this installation
            return SaleKind.FLIGHT
        return SaleKind.EVENT
    return SaleKind.FLIGHT


@require_http_methods(["GET", "POST"])
@staff_required
def checkin_scan(request: HttpRequest) -> HttpResponse:
    """The gate: pick the flight boarding or the event letting people in, then scan codes.
    The list and the check of the choice come from the catalogue (`gate_entries`)."""
    kind = _gate_kind(request)
    sold_by = catalogue.for_kind(kind)
    field = sold_by.owner or "sale"  # the form's field: "flight" or "event", its id
    choose = (
        _("Choose the event you are letting people in to.")
        if kind == SaleKind.EVENT
        else _("Choose the flight you are boarding.")
    )
    # A search string, never stored: a NUL (which PostgreSQL refuses in text) is just dropped.
    query = (request.POST.get("q") or request.GET.get("q") or "").replace("\x00", "").strip()[:40]
    now = timezone.now()
    today_until = now + timedelta(hours=24)
    entries = [
        {
            "entry": e,
            "local": local_time(e.starts_at, e.time_zone),
            "today": e.starts_at <= today_until,
        }
        for e in sold_by.gate_entries(query=query, now=now, limit=60)
    ]
    context: dict = {
        "kind": kind.lower(),
        "field": field,
        "entries": entries,
        "q": query,
        "chosen": None,
        "result": None,
        "error": None,
    }
    raw_choice = request.POST.get(field) or request.GET.get(field)
    if raw_choice:
        try:
            context["chosen"] = int(raw_choice)
        except ValueError:
            context["error"] = choose
        else:
            if not 0 < context["chosen"] < 2**63:  # no id of ours; the database would refuse it
                context["chosen"], context["error"] = None, choose
    if request.method == "POST" and not context["error"]:
        code = request.POST.get("code", "").strip()
        entry = sold_by.gate_entry(context["chosen"], now=now) if context["chosen"] else None
        if entry is None:
            context["error"] = choose
        elif not code:
            context["error"] = _("Scan or type a ticket code.")
        elif not is_plausible_code(code):
            context["error"] = _("That is not a Seatkeeper ticket code.")
        else:
            context["result"] = scan_ticket(
                code=code, sale_id=entry.sale_id, scanned_by=request.user
            )
            if context["result"].ticket is not None:
                context["face"] = catalogue.ticket_face(context["result"].ticket)
    status = 400 if context["error"] else 200
    return render(request, "bookings/checkin.html", context, status=status)
