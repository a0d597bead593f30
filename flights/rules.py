"""The catalogue's one rule about selling: is this flight still bookable?

Holding, paying, confirming, the seat picker, the waitlist and search all ask this one
function (or its queryset form), so "departed or cancelled" can never mean two things."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from flights.models import Flight, FlightStatus


def is_bookable(flight: Flight, *, now: datetime) -> bool:
    """Scheduled (not cancelled, not marked departed) and leaving after `now`."""
    return flight.status == FlightStatus.SCHEDULED and flight.departure_at > now


def bookable_q(*, now: datetime, prefix: str = "") -> Q:
    """`is_bookable` as a filter; `prefix` reaches the flight through a relation ("flight__")."""
    return Q(**{f"{prefix}status": FlightStatus.SCHEDULED, f"{prefix}departure_at__gt": now})
