"""Reads of an event's sale: the live seat map (every seat with its status, each standing area
with the places left), as the API and the seat picker show it.

The seats' status is the engine's (`bookings.Seat`); where they are drawn (x/y) comes from
the venue plan, which staff may edit while it is on sale (`events.plan_editing`).  The
finished JSON is cached per live seat-map version (`bookings.live`, bumped after every
committed seat change and every plan edit), so either shows at once; SEAT_MAP_SECONDS
bounds what no version covers (standing places sold by count, holds lapsing before the
sweep).  Holds never read this: they lock the rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from bookings.live import CachedJson, current_version
from bookings.models import Inventory, Seat, SeatStatus
from events.models import Event, EventStatus, PriceCategory, VenueSeat
from events.rules import is_open
from events.sale_snapshot import standing_sections
from events.selectors import category_places
from kernel import redis_clients, replica
from kernel.settled import SettledColumn

# Once set an event's sale never changes (`events.services._open_sale` sets it only where it
# is null; the sale is PROTECTed): the seat map's hot read needs no query.
_sale_of_event = SettledColumn(Event, "sale_id")


def sale_id_of_event(event_id: int) -> int | None:
    """The sale an event sells through (None: no such event, or not on sale yet)."""
    return _sale_of_event(event_id)


def seat_map_json(
    *,
    event_id: int,
    render: Callable[[dict[str, Any]], bytes],
    known: Callable[[str], bool] | None = None,
) -> CachedJson | None:
    """The seat map as finished JSON bytes and its ETag; None if the event sells nothing
    (unknown, draft).  `known(etag)` true: the client has it, the body is not even read."""
    sale_id = sale_id_of_event(event_id)
    if sale_id is None:
        return None
    found, version = _cached_seat_map(sale_id=sale_id, event_id=event_id, known=known)
    if found is not None:
        return found
    with replica.reads_caught_up():  # seats at least as new as `version` (kernel/replica.py)
        data = seat_map(event_id=event_id)
    if data is None:
        return None
    body = render(data)
    etag = f'W/"e{event_id}.{version}.{hashlib.sha256(body).hexdigest()[:16]}"'
    cache.set(_key(sale_id=sale_id, event_id=event_id, version=version), (etag, body), _ttl())
    return CachedJson(body=body, etag=etag)


def cached_seat_map_json(
    *, event_id: int, known: Callable[[str], bool] | None = None
) -> CachedJson | None:
    """`seat_map_json`'s answer when the cache alone gives it; None when only `seat_map_json`
    can answer: an event this process has not met (its sale is unknown without a query), a
    miss (an older version's entry, one past SEAT_MAP_SECONDS, never built) or Redis down.
    Every entry found is fresh: it lives SEAT_MAP_SECONDS under its version's key.  For
    config/cached_reads.py's fast path."""
    sale_id = _sale_of_event.known(event_id)
    if sale_id is None:
        return None
    return _cached_seat_map(sale_id=sale_id, event_id=event_id, known=known)[0]


def _cached_seat_map(
    *, sale_id: int, event_id: int, known: Callable[[str], bool] | None
) -> tuple[CachedJson | None, int]:
    """The cached seat map (None: build it) and the live version it was looked up under."""
    version = current_version(sale_id)
    found = cache.get(_key(sale_id=sale_id, event_id=event_id, version=version))
    if found is None:  # missing, expired, or Redis is down
        return None, version
    etag, body = found
    return CachedJson(body=None if known and known(etag) else body, etag=etag), version


def _key(*, sale_id: int, event_id: int, version: int) -> str:
    return f"events:seatmap:v2:{redis_clients.sale_tag(sale_id)}:{event_id}:{version}"


def _ttl() -> int:
    return settings.API_CACHE["SEAT_MAP_SECONDS"]


def seat_map(*, event_id: int) -> dict[str, Any] | None:
    """Every seat of the event's sale with what a customer should see, and its standing
    areas with the places left (not cached: `seat_map_json` caches the finished body)."""
    event = (
        Event.objects.select_related("venue")
        .filter(pk=event_id, sale__isnull=False)
        .exclude(status=EventStatus.DRAFT)
        .first()
    )
    if event is None:
        return None
    now = timezone.now()
    categories = {c.code: c for c in PriceCategory.objects.filter(event=event)}
    inventories = {i.fare_class: i for i in Inventory.objects.filter(sale_id=event.sale_id)}
    where = {
        (section, row, number): (x, y)
        for section, row, number, x, y in VenueSeat.objects.filter(
            section__venue_id=event.venue_id
        ).values_list("section__name", "row", "number", "x", "y")
    }
    seats = []
    for seat in Seat.objects.filter(sale_id=event.sale_id).order_by("section", "row", "number"):
        status = seat.status
        # A lapsed hold not yet swept is free: the next hold takes it over.
        if status == SeatStatus.HELD and seat.held_until <= now:
            status = SeatStatus.AVAILABLE
        x, y = where.get((seat.section, seat.row_label, seat.number), (None, None))
        category = categories.get(seat.fare_class)
        seats.append(
            {
                "seat_no": seat.seat_no,
                "section": seat.section,
                "row": seat.row_label,
                "number": seat.number,
                "x": x,
                "y": y,
                "category": seat.fare_class,
                **_look(category, inventories.get(seat.fare_class)),
                "accessible": seat.accessible,
                "restricted_view": seat.restricted_view,
                "status": status,
            }
        )
    area_category = {
        section_id: code
        for code, places in category_places(event=event).items()
        for section_id in places.standing
    }
    areas = []
    for code, section in sorted(standing_sections(event=event).items()):
        inventory = inventories.get(code)
        if inventory is None:
            continue
        category = categories.get(area_category.get(section.pk, ""))
        areas.append(
            {
                "fare_class": code,
                "section": section.name,
                "category": category.code if category else None,
                **_look(category, inventory),
                "capacity": inventory.capacity,
                "available": inventory.available,
            }
        )
    return {
        "event_id": event.pk,
        "status": event.status,
        "sale_open": is_open(event, now=now),
        "stage_side": event.venue.stage_side,
        "generated_at": now,
        "categories": [
            {
                "code": c.code,
                "name": c.name,
                "colour": c.colour,
                "price": c.price,
                "currency": c.currency,
                "available": (
                    (inventories[c.code].available if c.code in inventories else 0)
                    + sum(a["available"] for a in areas if a["category"] == c.code)
                ),
            }
            for c in sorted(categories.values(), key=lambda c: (c.price, c.code))
        ],
        "seats": seats,
        "standing_areas": areas,
    }


def _look(category: PriceCategory | None, inventory: Inventory | None) -> dict[str, Any]:
    """Name, colour and price of a place's category; the price the engine charges."""
    return {
        "category_name": category.name if category else "",
        "colour": category.colour if category else "",
        "price": inventory.price if inventory else (category.price if category else None),
        "currency": inventory.currency if inventory else (category.currency if category else ""),
    }
