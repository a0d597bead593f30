"""Reads for flight search and seat maps, cached and allowed to be a little stale.

This is the article's trade-off: the seat map may be a few seconds old, so a customer can see
a "free" seat and then be refused when holding it.  That is fine because holds never read
these caches: `bookings.services` always locks and checks the rows in PostgreSQL.

Cached values are plain data (dicts, lists, Decimals, datetimes), never model instances.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from flights.models import Airport, FareInventory, Flight, SeatStatus

# Days outside this range cannot hold a flight, and their UTC bounds may not be representable.
SEARCHABLE_DAYS = (date(1970, 1, 2), date(9999, 12, 30))


def _ttl(name: str) -> int:
    return settings.API_CACHE[name]


def _airport(airport: Airport) -> dict[str, Any]:
    return {
        "code": airport.code, "name": airport.name, "city": airport.city,
        "country": airport.country, "time_zone": airport.time_zone,
    }


def _fare(inventory: FareInventory) -> dict[str, Any]:
    return {
        "fare_class": inventory.fare_class,
        "price": inventory.price,
        "currency": inventory.currency,
        "available": inventory.available,
    }


def _flight(flight: Flight) -> dict[str, Any]:
    origin_tz = ZoneInfo(flight.origin.time_zone)
    destination_tz = ZoneInfo(flight.destination.time_zone)
    return {
        "id": flight.pk,
        "code": flight.code,
        "status": flight.status,
        "origin": _airport(flight.origin),
        "destination": _airport(flight.destination),
        "departure_at": flight.departure_at,
        "arrival_at": flight.arrival_at,
        # Wall-clock times where the traveller is, with their UTC offset.
        "departure_local": flight.departure_at.astimezone(origin_tz).isoformat(),
        "arrival_local": flight.arrival_at.astimezone(destination_tz).isoformat(),
        "fares": [_fare(inv) for inv in flight.inventories.all()],
    }


def _flights():
    return Flight.objects.select_related("origin", "destination").prefetch_related("inventories")


def search_flights(*, origin: str, destination: str, day: date) -> list[dict[str, Any]]:
    """Flights from `origin` to `destination` departing on `day` in the origin's local time."""
    origin, destination = origin.upper(), destination.upper()
    key = f"flights:search:v1:{origin}:{destination}:{day.isoformat()}"
    found = cache.get(key)
    if found is not None:
        return found

    airport = Airport.objects.filter(code=origin).only("time_zone").first()
    if airport is None or not SEARCHABLE_DAYS[0] <= day <= SEARCHABLE_DAYS[1]:
        found = []
    else:
        zone = ZoneInfo(airport.time_zone)
        # Midnight to midnight where the flight leaves; a DST day is 23 or 25 hours long.
        start = datetime.combine(day, time.min, tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
        found = [
            _flight(f)
            for f in _flights()
            .filter(
                origin_id=origin, destination_id=destination,
                departure_at__gte=start, departure_at__lt=end,
            )
            .order_by("departure_at", "code")
        ]
    cache.set(key, found, _ttl("FLIGHT_SEARCH_SECONDS"))
    return found


def flight_detail(*, flight_id: int) -> dict[str, Any] | None:
    key = f"flights:detail:v1:{flight_id}"
    found = cache.get(key)
    if found is None:
        flight = _flights().filter(pk=flight_id).first()
        if flight is None:
            return None
        found = _flight(flight)
        cache.set(key, found, _ttl("FLIGHT_SEARCH_SECONDS"))
    return found


def seat_map(*, flight_id: int) -> dict[str, Any] | None:
    """Every seat of the flight with the status a customer should see, cached for seconds."""
    key = f"flights:seatmap:v1:{flight_id}"
    found = cache.get(key)
    if found is not None:
        return found

    flight = (
        Flight.objects.filter(pk=flight_id).prefetch_related("inventories")
        .only("id", "code", "status").first()
    )
    if flight is None:
        return None
    now = timezone.now()
    seats = []
    for seat_no, row, letter, fare_class, status, held_until, surcharge in (
        flight.seats.order_by("row", "letter").values_list(
            "seat_no", "row", "letter", "fare_class", "status", "held_until", "surcharge"
        )
    ):
        # A lapsed hold not yet swept is free: the next hold takes it over.
        if status == SeatStatus.HELD and held_until <= now:
            status = SeatStatus.AVAILABLE
        seats.append({
            "seat_no": seat_no, "row": row, "letter": letter, "fare_class": fare_class,
            "status": status, "surcharge": surcharge,
        })
    found = {
        "flight_id": flight.pk,
        "code": flight.code,
        "status": flight.status,
        "generated_at": now,
        "fares": [_fare(inv) for inv in flight.inventories.all()],
        "seats": seats,
    }
    cache.set(key, found, _ttl("SEAT_MAP_SECONDS"))
    return found
