"""What an outbox event looks like in the log: its subject (the key), id and body.

The subject is `<prefix>.<aggregate>.<sale>.<aggregate id>.<event type>`, e.g.
`seatkeeper.booking.12.3456.booking.confirmed`: the sale and the booking are the key, so one
booking's events live on one subject, in the order they were stored.  The message id (NATS's
`Nats-Msg-Id`, a Kafka header later) is the outbox event id, which consumers dedupe on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kernel.models import OutboxEvent

MSG_ID_HEADER = "Nats-Msg-Id"
EVENT_TYPE_HEADER = "Seatkeeper-Event-Type"
# A subject token may not hold '.', '*', '>' or whitespace.
_UNSAFE = re.compile(r"[.*>\s]+")


def _token(value: object) -> str:
    return _UNSAFE.sub("_", str(value)) or "_"


@dataclass(frozen=True)
class LogMessage:
    event_id: int
    subject: str
    key: str  # the Kafka record key: "<sale>:<aggregate id>"
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True)
class LoggedEvent:
    """An event as a consumer reads it back."""

    event_id: int
    event_type: str
    aggregate_type: str
    aggregate_id: str
    sale_id: str
    occurred_at: datetime
    payload: dict[str, Any]


def key_of(event: OutboxEvent) -> tuple[str, str]:
    """(sale, aggregate id): what one ordered sequence of events belongs to."""
    sale = event.payload.get("saleId")
    return ("_" if sale is None else _token(sale)), _token(event.aggregate_id)


def subject_for(event: OutboxEvent, *, prefix: str) -> str:
    sale, aggregate = key_of(event)
    event_type = ".".join(_token(part) for part in event.event_type.split("."))
    return f"{prefix}.{_token(event.aggregate_type)}.{sale}.{aggregate}.{event_type}"


def message_for(event: OutboxEvent, *, prefix: str) -> LogMessage:
    sale, aggregate = key_of(event)
    body = {
        "eventId": event.pk,
        "eventType": event.event_type,
        "aggregateType": event.aggregate_type,
        "aggregateId": event.aggregate_id,
        "saleId": None if sale == "_" else sale,
        "occurredAt": event.created_at.isoformat(),
        "payload": event.payload,
    }
    return LogMessage(
        event_id=event.pk,
        subject=subject_for(event, prefix=prefix),
        key=f"{sale}:{aggregate}",
        headers={MSG_ID_HEADER: str(event.pk), EVENT_TYPE_HEADER: event.event_type},
        body=json.dumps(body, separators=(",", ":"), sort_keys=True).encode(),
    )


def read_message(body: bytes) -> LoggedEvent:
    data = json.loads(body)
    return LoggedEvent(
        event_id=int(data["eventId"]),
        event_type=data["eventType"],
        aggregate_type=data["aggregateType"],
        aggregate_id=str(data["aggregateId"]),
        sale_id=str(data["saleId"]),
        occurred_at=datetime.fromisoformat(data["occurredAt"]),
        payload=data["payload"],
    )
