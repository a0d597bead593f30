"""Whether a route is flown at all: the search page tells "no flight that day" (try another
date) from "no flight on this route" (try another destination)."""

from __future__ import annotations

from django.utils import timezone

from flights.models import Airport, Flight
from flights.rules import bookable_q


def is_route_flown(*, origin: Airport, destination: Airport) -> bool:
    """Any flight from `origin` to `destination` one can still book, on any day."""
    return Flight.objects.filter(
        bookable_q(now=timezone.now()), origin=origin, destination=destination
    ).exists()
