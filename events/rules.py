"""The catalogue's one rule about selling: is this event's sale open?

The event pages, the API and (with the sale engine) holds and payments all ask this function
or its queryset form, so "on sale" can never mean two things."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from events.models import Event, EventStatus


def is_open(event: Event, *, now: datetime) -> bool:
    """Published, the on-sale time reached, and the event not started yet."""
    return event.status == EventStatus.ON_SALE and event.on_sale_at <= now < event.starts_at


def open_q(*, now: datetime, prefix: str = "") -> Q:
    """`is_open` as a filter; `prefix` reaches the event through a relation ("event__")."""
    return Q(
        **{
            f"{prefix}status": EventStatus.ON_SALE,
            f"{prefix}on_sale_at__lte": now,
            f"{prefix}starts_at__gt": now,
        }
    )
