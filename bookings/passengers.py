"""Passengers of a booking: the names given with a hold or before paying, and a seat for a
seatless passenger."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue
from bookings.errors import (
    BookingNotFound,
    HoldExpired,
    InvalidBookingState,
    SeatBlocked,
    SeatNotFound,
    SeatUnavailable,
    SeatWrongCabin,
)
from bookings.models import Booking, BookingStatus, Passenger, Seat, SeatStatus
from kernel.errors import InvalidRequest
from kernel.locking import lock_errors_as_too_busy


def clean_passenger_names(names: Sequence[str] | None, count: int) -> list[str]:
    """`count` names, stripped, each at most 120 printable characters ("" each if none are
    given); InvalidRequest otherwise.  Every path that takes names takes them through here."""
    if not names:
        return [""] * count
    if len(names) != count:
        raise InvalidRequest(
            gettext("Give one passenger name per seat (%(count)s), not %(count2)s.")
            % {"count": count, "count2": len(names)},
            field="passengers",
        )
    cleaned = [str(n).strip() for n in names]
    if any(len(n) > 120 for n in cleaned):
        raise InvalidRequest(
            gettext("A passenger name is at most 120 characters."), field="passengers"
        )
    if not all(is_printable_name(n) for n in cleaned):
        raise InvalidRequest(
            gettext("A passenger name cannot contain control characters."), field="passengers"
        )
    return cleaned


def is_printable_name(name: str) -> bool:
    """No NUL (PostgreSQL refuses it in text), no other control or unpaired surrogate
    characters (which cannot even be encoded): a name is printed on a boarding pass."""
    # `str.isprintable` is False for every Cc and Cs character (and for more: Cf, Co, Cn,
    # separators other than the space), so True answers at once, in C, for almost every
    # name; the per-character test, a Python call per character, only decides the rest.
    return name.isprintable() or all(unicodedata.category(ch) not in {"Cc", "Cs"} for ch in name)


def name_passengers(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    names: Sequence[str] | None,
    conditions_confirmed: bool = False,
) -> Booking:
    """Give every passenger of the customer's HELD booking a name (seat order, then the order
    of seatless places), before it can be paid.  All names or none; each must be non-empty.
    `names` None keeps the names as they are.

    `conditions_confirmed`: the customer confirms the conditions of the passengers' seats (a
    flight's exit rows) now, recorded on each seated passenger not yet confirmed (online
    check-in then asks nothing of them)."""
    now = timezone.now()
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update().filter(pk=booking_id, customer=customer).first()
        )
        if booking is None:
            raise BookingNotFound()
        if booking.status == BookingStatus.EXPIRED or booking.hold_lapsed(now):
            raise HoldExpired()
        if booking.status != BookingStatus.HELD:
            raise InvalidBookingState(
                f"Names can be given only while the seats are held; this booking is "
                f"{booking.status.lower()}."
            )
        if names is not None:
            _set_names(booking, names)
        if conditions_confirmed:
            booking.passengers.filter(
                is_live=True, seat__isnull=False, seat_conditions_confirmed_at__isnull=True
            ).update(seat_conditions_confirmed_at=now)
    return booking


def _set_names(booking: Booking, names: Sequence[str]) -> None:
    passengers = list(booking.passengers.order_by(F("seat__seat_no").asc(nulls_last=True), "id"))
    cleaned = clean_passenger_names(names, len(passengers))
    # Printable they are already (clean_passenger_names, the one printable-name rule).
    if not all(cleaned):
        raise InvalidRequest(
            gettext("Enter the full name of every passenger (printable characters only)."),
            field="passengerNames",
        )
    for passenger, name in zip(passengers, cleaned, strict=True):
        passenger.full_name = name
    Passenger.objects.bulk_update(passengers, ["full_name"])


@lock_errors_as_too_busy
def assign_seat(*, booking_id: int, passenger_id: int, seat_no: str) -> Passenger:
    """Give a seatless passenger (an overbooking unit) a seat that has come free.

    Counters do not move: the unit was already held or sold; only the seat changes hands.
    """
    seat_no = seat_no.strip().upper()
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=booking_id, status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED])
            .first()
        )
        if booking is None:
            raise BookingNotFound(gettext("No live booking with that id."))
        passenger = booking.passengers.filter(pk=passenger_id, is_live=True).first()
        if passenger is None:
            raise InvalidRequest(
                gettext("That passenger is not on this booking."), field="passenger"
            )
        if passenger.seat_id is not None:
            raise InvalidBookingState(gettext("That passenger already has a seat."))
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=booking.sale_id, seat_no=seat_no)
            .first()
        )
        if seat is None:
            raise SeatNotFound([seat_no], texts=catalogue.texts_of_sale(booking.sale_id))
        if seat.fare_class != booking.fare_class:
            raise SeatWrongCabin(
                [seat_no], booking.fare_class, texts=catalogue.texts_of_sale(booking.sale_id)
            )
        if seat.status == SeatStatus.BLOCKED:
            raise SeatBlocked([seat_no], texts=catalogue.texts_of_sale(booking.sale_id))
        held = booking.status == BookingStatus.HELD
        claimed = Seat.objects.filter(pk=seat.pk, status=SeatStatus.AVAILABLE).update(
            status=SeatStatus.HELD if held else SeatStatus.SOLD,
            booking=booking,
            held_until=booking.expires_at if held else None,
        )
        if not claimed:
            raise SeatUnavailable([seat_no])
        Passenger.objects.filter(pk=passenger.pk).update(seat=seat)
        passenger.seat = seat
    return passenger
