"""Test-side confirmation of bookings without going through a gateway: the same
`sell_held_booking` that `payments.outcomes.confirm_payment` uses."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from bookings.services import close_bookings, hold_seats, sell_held_booking
from kernel.outbox import emit_event


def confirm(booking: Booking) -> Booking:
    """Confirm without a payment: the booking side of `payments.outcomes.confirm_payment`."""
    with transaction.atomic():
        booking = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(booking, now=timezone.now())
    booking.refresh_from_db()
    return booking


def hold_and_confirm(customer, flight, seats=("12A", "12B"), names=("Ana Lima", "Bo Chen")):
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
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
                "flightId": booking.sale_id,
                "refundId": refund_id,
                "amount": amount,
                "currency": booking.currency,
            },
        )
