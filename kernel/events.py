"""The registry of outbox consumers.

A consumer is a function of one outbox event, registered under a stable name (the name is
stored in each receipt, so renaming a consumer makes it see old events again).  Apps register
theirs in `AppConfig.ready()` by importing the module that holds them:

    @register_consumer("booking.cancelled", name="tickets.revoke")
    def revoke_tickets(event: OutboxEvent) -> None:
        tickets.revoke_tickets(booking_id=event.payload["bookingId"])

(bookings/outbox_handlers.py, as it is.)

The relay runs each consumer in its own savepoint together with its receipt
(kernel.ProcessedEvent), so a consumer needs no idempotency of its own against redelivery;
it must only do its work through the database (queue side effects with on_commit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kernel.models import OutboxEvent

Handler = Callable[[OutboxEvent], None]


@dataclass(frozen=True)
class Consumer:
    name: str
    event_type: str
    handle: Handler


_consumers: dict[str, Consumer] = {}


def register_consumer(event_type: str, *, name: str) -> Callable[[Handler], Handler]:
    def decorator(handle: Handler) -> Handler:
        existing = _consumers.get(name)
        if existing and (existing.event_type, existing.handle.__qualname__) != (
            event_type,
            handle.__qualname__,
        ):
            raise ValueError(f"An outbox consumer named {name!r} is already registered.")
        _consumers[name] = Consumer(name=name, event_type=event_type, handle=handle)
        return handle

    return decorator


def unregister_consumer(name: str) -> None:
    _consumers.pop(name, None)


def consumers_for(event_type: str) -> list[Consumer]:
    """The consumers of `event_type`, in registration order."""
    return [c for c in _consumers.values() if c.event_type == event_type]
