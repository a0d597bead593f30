"""What a passenger who does not fly gets instead (Art. 8): rerouting onto the next flight of
the same route with a free unit, through the engine (hold, then sell: the same two steps as a
paid booking), or a full refund of their share of the fare.

The rerouting writes the *later* flight's sale, so it never runs in the denial's transaction
(one sale per transaction: kernel/sharding.py): the denial only plans it (`plan_rerouting`,
a read), and flights.rerouting books it as a step of its own after the denial committed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, QuerySet

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.lifecycle import sell_held_booking
from bookings.models import Booking, Passenger, Seat, SeatStatus
from flights.models import Flight
from flights.rules import bookable_q
from kernel.errors import DomainError
from payments.models import PaymentStatus, RefundReason
from payments.refunds import create_refund
from payments.selectors import latest_payment


class NoLaterFlight(DomainError):
    status = 409
    code = "no-later-flight"
    title = "No later flight of this route has a free seat"


@dataclass(frozen=True)
class Rerouting:
    booking: Booking
    flight: Flight
    arrival_delay: timedelta


def later_flights(
    *, flight: Flight, fare_class: str, now: datetime, free: bool = True
) -> QuerySet[Flight]:
    """The route's later bookable flights selling `fare_class`, soonest first; with `free`,
    only those with a unit left (a read: it may still be taken before a hold)."""
    later = Flight.objects.filter(
        bookable_q(now=now),
        origin_id=flight.origin_id,
        destination_id=flight.destination_id,
        departure_at__gt=flight.departure_at,
    )
    if free:
        later = later.filter(
            sale__inventories__fare_class=fare_class,
            sale__inventories__sold__lt=(
                F("sale__inventories__capacity")
                + F("sale__inventories__overbook_limit")
                - F("sale__inventories__held")
            ),
        )
    return later.order_by("departure_at", "id")


def plan_rerouting(*, flight: Flight, fare_class: str, now: datetime) -> Flight:
    """The flight a denied passenger will be rerouted onto, as far as can be told now (the
    compensation's Art. 7(2) reduction is decided on it).  Raises NoLaterFlight."""
    planned = later_flights(flight=flight, fare_class=fare_class, now=now).first()
    if planned is None:
        raise NoLaterFlight()
    return planned


def book_onto(
    *, candidate: Flight, passenger: Passenger, customer: AbstractBaseUser, now: datetime
) -> Booking:
    """A CONFIRMED booking for `passenger` on `candidate` (a free seat first, else a seatless
    unit), in the caller's transaction: `candidate`'s sale's rows only.  Raises SoldOut."""
    booking = _hold_one(candidate, passenger.booking.fare_class, customer, passenger.full_name)
    booking = Booking.objects.select_for_update().get(sale_id=candidate.sale_id, pk=booking.pk)
    sell_held_booking(booking, now=now)
    return booking


def _hold_one(flight: Flight, fare_class: str, customer, name: str) -> Booking:
    free = (
        Seat.objects.filter(
            sale_id=flight.sale_id, fare_class=fare_class, status=SeatStatus.AVAILABLE
        )
        .order_by("row", "letter")
        .values_list("seat_no", flat=True)
        .first()
    )
    if free:
        # The seat may be in an exit row: the new passenger has confirmed nothing about it
        # (a confirmation is for the seat it was given for), so online check-in asks for the
        # exit-row conditions again (flights.online_checkin).  Never pass one on here.
        return hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class=fare_class,
            seat_numbers=[free],
            passenger_names=[name],
        )
    return hold_seatless(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class=fare_class,
        passengers=1,
        passenger_names=[name],
    )


def refund_fare_share(*, booking: Booking, decided_by, now: datetime) -> Decimal:
    """A full refund of one passenger's share of the fare (Art. 8(1)(a)), through payments'
    refunds; 0 when the booking has no paid payment (nothing to give back)."""
    payment = latest_payment(booking_id=booking.pk)
    if payment is None or payment.status != PaymentStatus.SUCCEEDED:
        return Decimal("0.00")
    share = (booking.amount / booking.seat_count).quantize(Decimal("0.01"))
    create_refund(
        payment, amount=share, reason=RefundReason.CANCELLATION, now=now, approved_by=decided_by
    )
    return share
