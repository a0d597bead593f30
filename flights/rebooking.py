"""What a passenger who does not fly gets instead (Art. 8): rerouting onto the next flight of
the same route with a free unit, through the engine (hold, then sell: the same two steps as a
paid booking, in the caller's transaction), or a full refund of their share of the fare."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SoldOut
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


def rebook_onto_next_flight(
    *, flight: Flight, passenger: Passenger, customer: AbstractBaseUser, now: datetime
) -> Rerouting:
    """A CONFIRMED booking for `passenger` on the next bookable flight of the route with a
    free unit of their class (a free seat first, else a seatless unit).  Raises NoLaterFlight."""
    fare_class = passenger.booking.fare_class
    later = Flight.objects.filter(
        bookable_q(now=now),
        origin_id=flight.origin_id,
        destination_id=flight.destination_id,
        departure_at__gt=flight.departure_at,
    ).order_by("departure_at", "id")
    for candidate in later:
        try:
            with transaction.atomic():  # a sold-out candidate costs nothing: try the next
                booking = _hold_one(candidate, fare_class, customer, passenger.full_name)
                booking = Booking.objects.select_for_update().get(pk=booking.pk)
                sell_held_booking(booking, now=now)
        except SoldOut:
            continue
        return Rerouting(booking, candidate, candidate.arrival_at - flight.arrival_at)
    raise NoLaterFlight()


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
