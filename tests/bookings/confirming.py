"""Test-side confirmation of bookings without going through a gateway: the same
`sell_held_booking` that `payments.outcomes.confirm_payment` uses."""

from __future__ import annotations

import json
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import close_bookings, sell_held_booking
from bookings.models import Booking, BookingStatus
from kernel.models import OutboxEvent
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType
from payments.models import Refund, RefundReason
from payments.outbox_payloads import refund_issued


def confirm(booking: Booking) -> Booking:
    """Confirm without a payment: the booking side of `payments.outcomes.confirm_payment`."""
    with transaction.atomic():
        booking = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(booking, now=timezone.now())
    booking.refresh_from_db()
    return booking


def hold_and_confirm(
    customer,
    flight,
    seats=("12A", "12B"),
    names=("Ana Lima", "Bo Chen"),
    *,
    conditions_confirmed=False,
):
    """`conditions_confirmed`: the customer confirms the seats' conditions with the hold (12 is
    an A320's exit row: its passengers board only with them confirmed)."""
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=list(seats),
        passenger_names=list(names),
        conditions_confirmed=conditions_confirmed,
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
    """`refund.issued` for `booking`, with the payload payments.refunds emits (its builder),
    for a refund that exists only in the event."""
    refund = Refund(
        id=refund_id,
        amount=Decimal(amount),
        currency=booking.currency,
        reason=RefundReason.CANCELLATION,
    )
    with transaction.atomic():
        emit_event(
            sale_id=booking.sale_id,
            aggregate_type="booking",
            aggregate_id=booking.pk,
            event_type=OutboxEventType.REFUND_ISSUED,
            payload=refund_issued(refund, booking_id=booking.pk, sale_id=booking.sale_id),
        )


def round_trip(event_type: OutboxEventType, payload: dict) -> dict:
    """Build → emit → read back from the row: what a consumer of `event_type` gets."""
    assert json.loads(json.dumps(payload)) == payload  # JSON-safe as built
    with transaction.atomic():
        event = emit_event(
            sale_id=0,
            aggregate_type="booking",
            aggregate_id=0,
            event_type=event_type,
            payload=payload,
        )
    row = OutboxEvent.objects.get(pk=event.pk)
    assert row.event_type == event_type.value
    return row.payload
