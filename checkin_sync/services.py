"""Applying one logged event to the check-in mirror, exactly once."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from checkin_sync.models import (
    AppliedEvent,
    CheckinBooking,
    CheckinPassenger,
    MirroredStatus,
    SaleTally,
)
from kernel.eventlog.envelope import LoggedEvent
from kernel.outbox_types import OutboxEventType


def apply_logged_event(*, event: LoggedEvent, stream_sequence: int) -> bool:
    """Apply `event` once; False if it was applied before (a redelivery or a duplicate)."""
    with transaction.atomic():
        if not claim_event(event=event, stream_sequence=stream_sequence):
            return False
        if event.event_type == OutboxEventType.BOOKING_CONFIRMED:
            _mirror_confirmed(event)
        elif event.event_type == OutboxEventType.BOOKING_CANCELLED:
            _mirror_cancelled(event)
        # Other events (expiries of holds, releases, refunds, offers) mean nothing at check-in;
        # their receipt still records that they were seen, in order.
    return True


def claim_event(*, event: LoggedEvent, stream_sequence: int) -> bool:
    """The receipt first, in the effect's transaction: if it exists, the effect happened."""
    try:
        with transaction.atomic():
            AppliedEvent.objects.create(
                event_id=event.event_id,
                booking_id=event.aggregate_id,
                event_type=event.event_type,
                stream_sequence=stream_sequence,
                applied_at=timezone.now(),
            )
    except IntegrityError:
        return False
    return True


def _tally(sale_id: str, *, bookings: int, passengers: int) -> None:
    SaleTally.objects.get_or_create(sale_id=sale_id)
    SaleTally.objects.filter(sale_id=sale_id).update(
        bookings=F("bookings") + bookings, passengers=F("passengers") + passengers
    )


def _mirror_confirmed(event: LoggedEvent) -> None:
    payload, now = event.payload, timezone.now()
    booking, _ = CheckinBooking.objects.update_or_create(
        booking_id=int(event.aggregate_id),
        defaults={
            "sale_id": event.sale_id,
            "status": MirroredStatus.CONFIRMED,
            "fare_class": payload.get("fareClass", ""),
            "last_event_id": event.event_id,
            "updated_at": now,
        },
    )
    passengers = payload.get("passengers", [])
    CheckinPassenger.objects.filter(booking=booking).delete()
    CheckinPassenger.objects.bulk_create(
        CheckinPassenger(
            booking=booking,
            passenger_id=p["passengerId"],
            full_name=p["fullName"],
            seat_no=p["seat"],
        )
        for p in passengers
    )
    _tally(event.sale_id, bookings=1, passengers=len(passengers))


def _mirror_cancelled(event: LoggedEvent) -> None:
    booking_id = int(event.aggregate_id)
    was = CheckinBooking.objects.filter(booking_id=booking_id).first()
    if was is not None and was.status == MirroredStatus.CONFIRMED:
        _tally(was.sale_id, bookings=-1, passengers=-was.passengers.count())
    CheckinPassenger.objects.filter(booking_id=booking_id).delete()
    CheckinBooking.objects.update_or_create(
        booking_id=booking_id,
        defaults={
            "sale_id": event.sale_id,
            "status": MirroredStatus.CANCELLED,
            "fare_class": event.payload.get("fareClass", ""),
            "last_event_id": event.event_id,
            "updated_at": timezone.now(),
        },
    )


def forget_mirror() -> None:
    """Empty the mirror and its receipts: the start of a rebuild from offset 0."""
    with transaction.atomic():
        AppliedEvent.objects.all().delete()
        CheckinPassenger.objects.all().delete()
        CheckinBooking.objects.all().delete()
        SaleTally.objects.all().delete()
