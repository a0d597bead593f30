"""Test-side confirmation of bookings.  Payments owns the real `confirm_payment`; these tests
need CONFIRMED bookings with the same effects: seats SOLD, held -> sold, and the
`booking.confirmed` outbox event written in the same transaction."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from bookings.outbox import emit_event
from bookings.services import close_bookings, hold_seats
from flights.models import FareInventory, Seat, SeatStatus


def confirm(booking: Booking) -> Booking:
    now = timezone.now()
    with transaction.atomic():
        booking = Booking.objects.select_for_update().get(pk=booking.pk)
        won = Booking.objects.filter(pk=booking.pk, status=BookingStatus.HELD).update(
            status=BookingStatus.CONFIRMED, confirmed_at=now, updated_at=now
        )
        assert won == 1
        seats = sorted(Seat.objects.filter(booking=booking).values_list("seat_no", flat=True))
        Seat.objects.filter(booking=booking, status=SeatStatus.HELD).update(
            status=SeatStatus.SOLD, held_until=None
        )
        FareInventory.objects.filter(
            flight_id=booking.flight_id, fare_class=booking.fare_class
        ).update(held=F("held") - booking.seat_count, sold=F("sold") + booking.seat_count)
        emit_event(
            aggregate_type="booking",
            aggregate_id=booking.pk,
            event_type="booking.confirmed",
            payload={
                "bookingId": booking.pk,
                "flightId": booking.flight_id,
                "fareClass": booking.fare_class,
                "seatCount": booking.seat_count,
                "seats": seats,
            },
        )
    booking.refresh_from_db()
    return booking


def hold_and_confirm(customer, flight, seats=("12A", "12B"), names=("Ana Lima", "Bo Chen")):
    booking = hold_seats(
        customer=customer,
        flight_id=flight.pk,
        fare_class="ECONOMY",
        seat_numbers=list(seats),
        passenger_names=list(names),
    )
    return confirm(booking)


def cancel_confirmed(booking: Booking) -> Booking:
    with transaction.atomic():
        locked = Booking.objects.select_for_update().get(pk=booking.pk)
        close_bookings(
            [locked],
            from_status=BookingStatus.CONFIRMED,
            to_status=BookingStatus.CANCELLED,
            now=timezone.now(),
        )
    booking.refresh_from_db()
    return booking


def emit_refund(booking: Booking, *, refund_id: str = "rf_1", amount: str = "208.00") -> None:
    with transaction.atomic():
        emit_event(
            aggregate_type="booking",
            aggregate_id=booking.pk,
            event_type="refund.issued",
            payload={
                "bookingId": booking.pk,
                "flightId": booking.flight_id,
                "refundId": refund_id,
                "amount": amount,
                "currency": booking.currency,
            },
        )
