"""Reads for flight search and seat maps, cached and allowed to be a little stale.

This is the article's trade-off: the seat map may be a few seconds old, so a customer can see
a "free" seat and then be refused when holding it.  That is fine because holds never read
these caches: `bookings.customer_holds` always locks and checks the rows in PostgreSQL.

Cached values are plain data or final bytes, never model instances.  The hot reads (the seat
map and flight search) are cached as the finished JSON body with its ETag, so a warm read is
one Redis round trip and no serialisation; `If-None-Match` answers 304 from the same entry.
The customer pages' reads are `flights.offers` (search) and `flights.cabin_map` (the picker).
"""

from __future__ import annotations

import hashlib
import time as time_module
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.cache import cache
from django.db.models import Q, QuerySet
from django.utils import timezone, translation
from django.utils.translation import gettext

from bookings.booking_classes import cheapest_open, choices_of
from bookings.errors import SaleNotFound
from bookings.live import CachedJson, version_key
from bookings.models import BookingClass
from flights.models import Airport, FareInventory, Flight, FlightStatus, SeatStatus
from kernel import redis_clients, replica
from kernel.settled import SettledColumn
from waitroom import room_selectors

# Days outside this range cannot hold a flight, and their UTC bounds may not be representable.
SEARCHABLE_DAYS = (date(1970, 1, 2), date(9999, 12, 30))


# Front doors translate `flightId` to the engine's sale id without a query on the hot path.
_sale_of_flight = SettledColumn(Flight, "sale_id")


def sale_id_of_flight(flight_id: int) -> int | None:
    """The sale a flight owns (None: no such flight); the pair never changes once created."""
    return _sale_of_flight(flight_id)


def sale_of_flight(flight_id: int) -> int:
    """`sale_id_of_flight` for front doors: a missing flight is a 404 problem."""
    sale_id = sale_id_of_flight(flight_id)
    if sale_id is None:
        raise SaleNotFound(gettext("There is no flight %(id)s.") % {"id": flight_id})
    return sale_id


def _language() -> str:
    """The active language, as the cache keys of answers with airport names carry it."""
    return (translation.get_language() or "en").split("-")[0]


def _ttl(name: str) -> int:
    return settings.API_CACHE[name]


Render = Callable[[Any], bytes]


def _digest(*parts: Any) -> str:
    return hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()


def _airport(airport: Airport) -> dict[str, Any]:
    """The airport in the active language (the request's Accept-Language, as problems are):
    `name` and `city` are the localised names where the airport has them, else English."""
    return {
        "code": airport.code,
        "name": airport.local_name,
        "city": airport.local_city,
        "country": airport.country,
        "time_zone": airport.time_zone,
    }


def _fare(inventory: FareInventory, classes: list[BookingClass]) -> dict[str, Any]:
    """A fare class with its nested booking classes (docs/fare-classes.md) and the cheapest
    one still open; `price` stays the fare class's own, as clients have always read it."""
    nested = [c for c in classes if c.fare_class == inventory.fare_class]
    choices = choices_of(inventory, nested)
    cheapest = cheapest_open(choices)
    return {
        "fare_class": inventory.fare_class,
        "price": inventory.price,
        "currency": inventory.currency,
        "available": inventory.available,
        "booking_classes": [
            {"code": c.code, "name": c.name, "price": c.price, "available": c.left}
            for c in choices
            if c.code
        ],
        "cheapest_open": None
        if cheapest is None
        else {"booking_class": cheapest.code, "price": cheapest.price, "available": cheapest.left},
    }


def _fares(sale) -> list[dict[str, Any]]:
    classes = list(sale.booking_classes.all())
    return [_fare(inv, classes) for inv in sale.inventories.all()]


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
        "fares": _fares(flight.sale),
        "waiting_room": _room(flight.sale.waiting_rooms.all()),
    }


def _room(rooms) -> dict[str, Any] | None:
    """The waiting room in front of the sale (at most one, a unique constraint), or None."""
    return next((room_selectors.room_summary(room) for room in rooms), None)


def _flights():
    return Flight.objects.select_related("origin", "destination").prefetch_related(
        "sale__inventories", "sale__booking_classes", "sale__waiting_rooms"
    )


def local_day(day: date, time_zone: str) -> tuple[datetime, datetime]:
    """Midnight to midnight of `day` where the flight leaves; a DST day is 23 or 25 hours."""
    zone = ZoneInfo(time_zone)
    return (
        datetime.combine(day, time.min, tzinfo=zone),
        datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone),
    )


def search_flights_json(
    *,
    origin: str,
    destination: str,
    day: date,
    render: Render,
    offset: int = 0,
    limit: int | None = None,
    known: Callable[[str], bool] | None = None,
) -> tuple[CachedJson, bool]:
    """`search_flights` as finished JSON bytes (`limit` of them from `offset`, all without a
    limit), cached for FLIGHT_SEARCH_SECONDS, and whether more follow.

    The ETag covers the body and the live-seat-map version of every flight in it at the time
    it was built; the entry itself lives by its TTL (availability may be that stale).
    `known(etag)` says whether the client already has that ETag (If-None-Match): then only
    the small meta entry is read and `body` is None, as for the seat map.
    """
    origin, destination = origin.upper(), destination.upper()
    key = (
        f"flights:search:v5:{_language()}:{origin}:{destination}:{day.isoformat()}:{offset}:{limit}"
    )
    body_key = f"{key}:body"
    wanted = [key] if known else [key, body_key]
    # {} or None when Redis is down; one MGET on the thread's own connection (issue 26)
    found_entries = redis_clients.cache_get_many(wanted) or {}
    meta = found_entries.get(key)  # (etag, has_more)
    if meta is not None:
        if known and known(meta[0]):
            return CachedJson(body=None, etag=meta[0]), meta[1]
        stored = found_entries.get(body_key) if body_key in wanted else cache.get(body_key)
        # The body carries its ETag: a pair of two builds' keys is a miss, never a wrong 304.
        if stored is not None and stored[0] == meta[0]:
            return CachedJson(body=stored[1], etag=meta[0]), meta[1]
    with replica.reads_within_lag():  # a search may be FLIGHT_SEARCH_SECONDS stale anyway
        found = search_flights(origin=origin, destination=destination, day=day)
    stop = len(found) if limit is None else offset + limit
    found, has_more = found[offset:stop], len(found) > stop
    ids = [f["id"] for f in found]
    versions = (
        cache.get_many([version_key(sale_id_of_flight(i) or 0) for i in ids]) if ids else None
    ) or {}
    body = render(found)
    etag = f'W/"s{_digest(versions, body)}"'
    timeout = _ttl("FLIGHT_SEARCH_SECONDS")
    cache.set_many({body_key: (etag, body), key: (etag, has_more)}, timeout)
    return CachedJson(body=body, etag=etag), has_more


def search_flights(*, origin: str, destination: str, day: date) -> list[dict[str, Any]]:
    """Flights from `origin` to `destination` departing on `day` in the origin's local time.

    Not cached: `search_flights_json` caches the finished body."""
    origin, destination = origin.upper(), destination.upper()
    airport = Airport.objects.filter(code=origin).only("time_zone").first()
    if airport is None or not SEARCHABLE_DAYS[0] <= day <= SEARCHABLE_DAYS[1]:
        found = []
    else:
        start, end = local_day(day, airport.time_zone)
        found = [
            _flight(f)
            for f in _flights()
            .filter(
                origin_id=origin,
                destination_id=destination,
                departure_at__gte=start,
                departure_at__lt=end,
            )
            .order_by("departure_at", "code")
        ]
    return found


def flight_detail(*, flight_id: int) -> dict[str, Any] | None:
    key = f"flights:detail:v2:{_language()}:{flight_id}"
    found = cache.get(key)
    if found is None:
        flight = _flights().filter(pk=flight_id).first()
        if flight is None:
            return None
        found = _flight(flight)
        cache.set(key, found, _ttl("FLIGHT_SEARCH_SECONDS"))
    return found


def seat_map_json(
    *, flight_id: int, render: Render, known: Callable[[str], bool] | None = None
) -> CachedJson | None:
    """The seat map as finished JSON bytes; None if there is no such flight.

    The entry is tied to the flight's live-seat-map version (`bookings.live`, bumped after
    every committed seat change): a reader that finds a different version rebuilds, so a seat
    change is visible at once, and the ETag changes with it.  SEAT_MAP_SECONDS still bounds
    the staleness of what no version covers (seatless units sold, holds lapsing without a
    sweep): after it one reader rebuilds while the others keep serving the entry for that
    moment, instead of all of them querying at once.  The version is read before the seats
    (as in `seat_map_snapshot`), so an entry never claims a version newer than its seats.
    Holds never read this: they lock and check the rows in PostgreSQL.

    `known(etag)` says whether the client already has that ETag (If-None-Match): then the
    body stays in Redis and `body` is None.  The ETag and the body are separate keys so that
    this answer moves a few bytes, not the whole map.
    """
    sale_id = sale_id_of_flight(flight_id) or 0
    found, version = _cached_seat_map(
        sale_id=sale_id, flight_id=flight_id, known=known, stale_ok=True
    )
    if found is not None:
        return found
    meta_key = seat_map_meta_key(sale_id=sale_id, flight_id=flight_id)
    body_key = f"{meta_key}:body"
    with replica.reads_caught_up():  # seats at least as new as `version` (kernel/replica.py)
        data = seat_map(flight_id=flight_id)
    if data is None:
        return None
    etag = f'W/"{flight_id}.{version}.{_digest(data["fares"], data["seats"])}"'
    body = render(data)
    timeout = 10 * _ttl("SEAT_MAP_SECONDS") + 10
    cache.set(body_key, (etag, body), timeout)
    cache.set(meta_key, (version, etag, time_module.time()), timeout)
    cache.delete(f"{meta_key}:rebuilding")
    return CachedJson(body=body, etag=etag)


def cached_seat_map_json(
    *, flight_id: int, known: Callable[[str], bool] | None = None
) -> CachedJson | None:
    """`seat_map_json`'s answer when the cache alone gives it, fresh; None when only
    `seat_map_json` can answer: a flight this process has not met (its sale is unknown without
    a query), a miss, an entry of an older version or past SEAT_MAP_SECONDS (whose rebuild
    `seat_map_json` arranges), or Redis down.  For config/cached_reads.py's fast path."""
    sale_id = _sale_of_flight.known(flight_id)
    if sale_id is None:
        return None
    return _cached_seat_map(sale_id=sale_id, flight_id=flight_id, known=known, stale_ok=False)[0]


def _cached_seat_map(
    *, sale_id: int, flight_id: int, known: Callable[[str], bool] | None, stale_ok: bool
) -> tuple[CachedJson | None, int]:
    """The cached seat map (None: rebuild it) and the live version it was compared with.  An
    entry past SEAT_MAP_SECONDS is served when `stale_ok` and another reader is rebuilding it."""
    # Version, meta and body share the sale's hash tag: one MGET, one slot, on a cluster too.
    meta_key = seat_map_meta_key(sale_id=sale_id, flight_id=flight_id)
    body_key = f"{meta_key}:body"
    wanted = [version_key(sale_id), meta_key] + ([] if known else [body_key])
    # {} or None when Redis is down; one MGET on the thread's own connection (issue 26)
    found = redis_clients.cache_get_many(wanted) or {}
    version = found.get(version_key(sale_id)) or 0
    meta = found.get(meta_key)  # (version, etag, built at)
    if meta is not None and meta[0] == version:
        fresh = time_module.time() - meta[2] < _ttl("SEAT_MAP_SECONDS")
        if fresh or (stale_ok and not cache.add(f"{meta_key}:rebuilding", 1, timeout=5)):
            if known and known(meta[1]):
                return CachedJson(body=None, etag=meta[1]), version
            stored = found.get(body_key) if body_key in wanted else cache.get(body_key)
            # The body carries its own ETag: two rebuilders racing may pair keys of two
            # versions for a moment; such a pair is a miss, never a wrong 304 later.
            if stored is not None and stored[0] == meta[1]:
                return CachedJson(body=stored[1], etag=meta[1]), version
    return None, version


def seat_map_meta_key(*, sale_id: int, flight_id: int) -> str:
    """The cached seat map's (version, ETag, built at); its body is this plus ":body"."""
    return f"flights:seatmap:v4:{redis_clients.sale_tag(sale_id)}:{flight_id}"


def seat_map(*, flight_id: int) -> dict[str, Any] | None:
    """Every seat of the flight with the status a customer should see (not cached:
    `seat_map_json` caches the finished body)."""
    flight = (
        Flight.objects.filter(pk=flight_id)
        .prefetch_related("sale__inventories", "sale__booking_classes")
        .only("id", "code", "status", "exit_rows")
        .first()
    )
    if flight is None:
        return None
    now = timezone.now()
    exit_rows = set(flight.exit_rows or ())
    seats = []
    for (
        seat_no,
        row,
        letter,
        fare_class,
        status,
        held_until,
        surcharge,
    ) in flight.sale.seats.order_by("row", "letter").values_list(
        "seat_no", "row", "letter", "fare_class", "status", "held_until", "surcharge"
    ):
        # A lapsed hold not yet swept is free: the next hold takes it over.
        if status == SeatStatus.HELD and held_until <= now:
            status = SeatStatus.AVAILABLE
        seats.append(
            {
                "seat_no": seat_no,
                "row": row,
                "letter": letter,
                "fare_class": fare_class,
                "status": status,
                "surcharge": surcharge,
                "exit_row": row in exit_rows,
            }
        )
    return {
        "flight_id": flight.pk,
        "code": flight.code,
        "status": flight.status,
        "generated_at": now,
        "fares": _fares(flight.sale),
        "seats": seats,
    }


# --- the gate: which flights an agent may be boarding ----------------------------------------


def gate_flights(*, now=None, query: str = "", limit: int = 200) -> QuerySet[Flight]:
    """Flights a gate agent may be boarding: scheduled, departing from 12 hours ago on,
    soonest first (today's departures at the top).  `query` narrows by flight code or airport
    code/city."""
    now = now or timezone.now()
    flights = Flight.objects.filter(
        status=FlightStatus.SCHEDULED, departure_at__gte=now - timedelta(hours=12)
    )
    query = query.strip()
    if query:
        flights = flights.filter(
            Q(code__icontains=query)
            | Q(origin__code__iexact=query)
            | Q(destination__code__iexact=query)
            | Q(origin__city__icontains=query)
            | Q(destination__city__icontains=query)
        )
    return flights.select_related("origin", "destination").order_by("departure_at")[:limit]


def is_gate_flight(*, flight_id: int | None, now=None) -> bool:
    """Whether a gate may board `flight_id` now (scheduled, departing from 12 hours ago on)."""
    now = now or timezone.now()
    return (
        flight_id is not None
        and Flight.objects.filter(
            pk=flight_id,
            status=FlightStatus.SCHEDULED,
            departure_at__gte=now - timedelta(hours=12),
        ).exists()
    )
