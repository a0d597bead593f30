"""Writing to the transactional outbox.  Call only inside the transaction of the change."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from bookings.models import OutboxEvent


def emit_event(*, aggregate_type: str, aggregate_id: object, event_type: str, payload: dict[str, Any]) -> OutboxEvent:
    connection = transaction.get_connection()
    assert connection.in_atomic_block, "outbox events are written inside the transaction they announce"
    return OutboxEvent.objects.create(
        aggregate_type=aggregate_type,
        aggregate_id=str(aggregate_id),
        event_type=event_type,
        payload=payload,
        created_at=timezone.now(),
    )


def emit_events(events: list[OutboxEvent]) -> None:
    """Bulk variant for sweeps; every event must already carry its fields."""
    connection = transaction.get_connection()
    assert connection.in_atomic_block, "outbox events are written inside the transaction they announce"
    now = timezone.now()
    for event in events:
        event.created_at = now
    OutboxEvent.objects.bulk_create(events)
