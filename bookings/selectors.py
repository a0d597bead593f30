"""Reads of bookings, always scoped to who is asking.

`access_booking` is the only way the interfaces fetch one booking: it answers "not found" for
someone else's booking, so nobody can learn that a booking id exists.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import F, Prefetch, QuerySet
from django.utils.translation import gettext

from bookings import catalogue
from bookings.errors import BookingNotFound, PassengerNamesMissing, TicketNotFound
from bookings.models import Booking, Passenger, SaleKind, Ticket
from kernel.compiled import CompiledRead

BOOK_ON_BEHALF = "bookings.book_on_behalf"


def acts_for_customers(user: AbstractBaseUser) -> bool:
    """Travel agents and staff: may book for, see and cancel other customers' bookings."""
    return user.has_perm(BOOK_ON_BEHALF)


def _with_details(bookings: QuerySet[Booking]) -> QuerySet[Booking]:
    return bookings.select_related("sale", *catalogue.owner_paths("sale__")).prefetch_related(
        Prefetch("passengers", queryset=Passenger.objects.select_related("seat").order_by("id"))
    )


def bookings_of(*, customer: AbstractBaseUser) -> QuerySet[Booking]:
    """The customer's own bookings, newest first."""
    return _with_details(Booking.objects.filter(customer=customer)).order_by("-created_at", "-id")


def access_booking(*, user: AbstractBaseUser, booking_id: int) -> Booking:
    bookings = Booking.objects.filter(pk=booking_id)
    if not acts_for_customers(user):
        bookings = bookings.filter(customer=user)
    booking = _with_details(bookings).first()
    if booking is None:
        raise BookingNotFound(gettext("You have no booking %(id)s.") % {"id": booking_id})
    return booking


def booking_just_written(*, booking: Booking) -> Booking:
    """A booking the current request has just created for the customer it acts for, with
    its details for the response.  No access check (and so no permission queries): the
    request was allowed to write it a moment ago.

    Built from what the hold wrote, without a query, when the service left it on the
    instance (`written_passengers` from `create_held_booking`, and the sale with its
    catalogue item): the same passengers in the same (id) order as a read would give.
    Otherwise it is read back."""
    passengers = getattr(booking, "written_passengers", None)
    sale = booking.sale if Booking.sale.is_cached(booking) else None
    if passengers is None or sale is None or not sale_owner_cached(sale):
        return _with_details(Booking.objects.filter(pk=booking.pk)).get()
    in_order = booking.passengers.all()
    in_order._result_cache = sorted(passengers, key=lambda p: p.pk)
    in_order._prefetch_done = True
    # What prefetch_related("passengers") would have left: booking.passengers.all() is it.
    booking._prefetched_objects_cache = {"passengers": in_order}
    return booking


def sale_owner_cached(sale) -> bool:
    """The sale's catalogue item (its flight or event) came with it: no query to name it."""
    return any(
        sale._meta.get_field(path.split("__")[0]).is_cached(sale)
        for path in catalogue.owner_paths()
    )


def active_customer(*, customer_id: int) -> AbstractBaseUser | None:
    return get_user_model().objects.filter(pk=customer_id, is_active=True).first()


# --- names before payment ----------------------------------------------------------------------


def check_passengers_named(*, booking_id: int) -> None:
    """Every passenger has a name, or PassengerNamesMissing listing who has not.

    The one place of the rule "named before paid": a waitlist offer and a seatless
    (overbooking) hold are created without names, and a confirmed ticket always carries one.
    Names can only be replaced by other non-empty names (`name_passengers`), so a booking
    that passed this check when its payment started is still named when the money arrives."""
    everyone = _PASSENGER_NAMES.rows(booking_id=booking_id)
    missing = [
        {"passengerId": pk, "position": position, "seat": seat_no}
        for position, (pk, seat_no, name) in enumerate(everyone, start=1)
        if _unnamed(name)
    ]
    if not missing:
        return
    who = ", ".join(
        gettext("passenger %(position)s (seat %(seat)s)") % m
        if m["seat"]
        else gettext("passenger %(position)s (no seat yet)") % m
        for m in missing
    )
    raise PassengerNamesMissing(
        gettext(
            "Every passenger needs a full name before the booking can be paid; missing: "
            "%(who)s. Give them with PUT /api/bookings/%(id)s/passengers (passengerNames) or "
            "on the booking page."
        )
        % {"who": who, "id": booking_id},
        unnamedPassengers=missing,
    )


def _unnamed(full_name: str) -> bool:
    return not full_name.strip()


def live_passengers_named(passengers: list[tuple[int, str, str | None, bool]]) -> bool:
    """`check_passengers_named`'s rule on rows already read (`lifecycle.passengers_to_sell`:
    id, full name, seat number, live): True when it would pass."""
    return not any(_unnamed(name) for _pk, name, _seat_no, live in passengers if live)


# Compiled once per connection (kernel.compiled): every pay request asks it on recording (a
# confirmation checks the same rule on `lifecycle.passengers_to_sell`'s rows).
_PASSENGER_NAMES = CompiledRead(
    Passenger,
    lambda booking_id: (
        Passenger.objects.filter(booking_id=booking_id, is_live=True)
        .order_by(F("seat__seat_no").asc(nulls_last=True), "id")
        .values_list("pk", "seat__seat_no", "full_name")
    ),
    booking_id=int,
)


# --- tickets -----------------------------------------------------------------------------------


def _visible_bookings(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Booking]:
    if not user.is_authenticated:
        return Booking.objects.none()
    if acts_for_customers(user):
        return Booking.objects.all()
    return Booking.objects.filter(customer=user)


def tickets_for_booking(
    *, booking_id: int, user: AbstractBaseUser | AnonymousUser | None = None
) -> QuerySet[Ticket]:
    """The booking's tickets (valid, used and revoked), in passenger order.

    With `user`, only the booking's owner and those who act for customers see them; anyone
    else gets BookingNotFound, exactly as if the booking did not exist.
    """
    if user is not None and not _visible_bookings(user).filter(pk=booking_id).exists():
        raise BookingNotFound()
    return (
        Ticket.objects.filter(booking_id=booking_id)
        .select_related("booking", "sale", *catalogue.detail_paths("sale__"))
        .order_by("id")
    )


def access_ticket(
    *, user: AbstractBaseUser | AnonymousUser, booking_id: int, ticket_id: int
) -> Ticket:
    """The ticket if `user` may see its booking, else TicketNotFound."""
    ticket = (
        Ticket.objects.select_related("booking", "sale", *catalogue.detail_paths("sale__"))
        .filter(pk=ticket_id, booking_id=booking_id, booking__in=_visible_bookings(user))
        .first()
    )
    if ticket is None:
        raise TicketNotFound()
    return ticket


def sale_id_of(kind: SaleKind, ref: int) -> int:
    """The sale behind a catalogue item named by a front door (`flightId` 12 -> its sale),
    through the catalogue registered for `kind`; a missing item is a 404 problem."""
    sale_id = catalogue.sale_id_for(kind, ref)
    if sale_id is None:
        seller = catalogue.for_kind(kind)
        raise seller.not_found_error(str(seller.texts.not_found) % {"id": ref})
    return sale_id
