"""Whether a route is flown at all: the search page tells "no flight that day" (try another
date) from "no flight on this route" (try another destination)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.db.models import Min
from django.utils import timezone

from flights.models import Airport, Flight
from flights.rules import bookable_q


def is_route_flown(*, origin: Airport, destination: Airport) -> bool:
    """Any flight from `origin` to `destination` one can still book, on any day."""
    return Flight.objects.filter(
        bookable_q(now=timezone.now()), origin=origin, destination=destination
    ).exists()


def routes_on_sale(*, limit: int = 8) -> list[dict]:
    """What the home page suggests before any search: each route one can still book, with its
    next departure's local date (at the origin), soonest first."""
    rows = (
        Flight.objects.filter(bookable_q(now=timezone.now()))
        .values("origin", "destination", "origin__time_zone")
        .annotate(next_at=Min("departure_at"))
        .order_by("next_at")[:limit]
    )
    rows = list(rows)
    codes = {row["origin"] for row in rows} | {row["destination"] for row in rows}
    airports = Airport.objects.in_bulk(codes)
    return [
        {
            "origin": row["origin"],
            "destination": row["destination"],
            "origin_city": airports[row["origin"]].local_city,
            "destination_city": airports[row["destination"]].local_city,
            "date": row["next_at"].astimezone(ZoneInfo(row["origin__time_zone"])).date(),
        }
        for row in rows
    ]
