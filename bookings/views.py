"""Customer pages for holds and bookings.  Thin: every write is a service call, and every
domain error becomes a message on the page the customer came from."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_http_methods, require_POST

from bookings import services
from bookings.errors import DomainError
from bookings.forms import HoldForm
from bookings.models import Booking, BookingStatus
from flights.selectors import local_time


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
    if not form.is_valid():
        messages.error(request, " ".join(e for errs in form.errors.values() for e in errs))
        return redirect(picker)
    try:
        booking = services.hold_seats(
            customer=request.user,
            flight_id=flight_id,
            fare_class=form.cleaned_data["fare_class"],
            seat_numbers=form.seats,
            passenger_names=form.names,
        )
    except DomainError as error:
        show_domain_error(request, error)
        return redirect(picker)
    return redirect("bookings:detail", booking_id=booking.pk)


@login_required
def booking_detail(request: HttpRequest, booking_id: int) -> HttpResponse:
    """The hold page while HELD (countdown, pay), the confirmation once CONFIRMED."""
    booking = get_object_or_404(
        Booking.objects.select_related("flight__origin", "flight__destination"),
        pk=booking_id,
        customer=request.user,
    )
    now = timezone.now()
    lapsed = booking.status == BookingStatus.HELD and booking.expires_at <= now
    passengers = booking.passengers.select_related("seat").order_by("seat__seat_no", "id")
    return render(
        request,
        "bookings/detail.html",
        {
            "booking": booking,
            "passengers": passengers,
            # Not yet swept by expire_holds, but no longer payable: show it as expired.
            "lapsed": lapsed,
            "holding": booking.status == BookingStatus.HELD and not lapsed,
            "now": now,
            "departure_local": local_time(booking.flight.departure_at, booking.flight.origin),
            "arrival_local": local_time(booking.flight.arrival_at, booking.flight.destination),
            "pay_url": _payments_url("payments:checkout", booking.pk),
        },
    )


@login_required
def my_bookings(request: HttpRequest) -> HttpResponse:
    bookings = list(
        Booking.objects.filter(customer=request.user)
        .select_related("flight__origin", "flight__destination")
        .prefetch_related("passengers__seat")
        .order_by("-created_at")
    )
    now = timezone.now()
    for b in bookings:
        b.lapsed = b.status == BookingStatus.HELD and b.expires_at <= now
        b.departure_local = local_time(b.flight.departure_at, b.flight.origin)
    return render(request, "bookings/my_bookings.html", {"bookings": bookings})


@require_POST
@login_required
def hold_cancel(request: HttpRequest, booking_id: int) -> HttpResponse:
    try:
        booking = services.cancel_hold(customer=request.user, booking_id=booking_id)
    except DomainError as error:
        show_domain_error(request, error)
    else:
        seats = ", ".join(
            p.seat.seat_no for p in booking.passengers.select_related("seat") if p.seat
        )
        messages.success(request, f"Hold cancelled. Seats {seats} are free again.")
    return redirect("bookings:mine")


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("flights:search")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}! You are signed in.")
        next_url = request.GET.get("next", "")
        if url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure()):
            return redirect(next_url)
        return redirect("flights:search")
    return render(request, "registration/signup.html", {"form": form})


def _payments_url(name: str, booking_id: int) -> str | None:
    # TODO(payments): the payments helper provides `payments:checkout` (POST, booking id) that
    # starts the sandbox hosted checkout; until that URL exists the hold page offers no payment.
    try:
        return reverse(name, args=[booking_id])
    except NoReverseMatch:
        return None
