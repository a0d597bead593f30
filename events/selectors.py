"""Reads for the events catalogue: search, one event, and which seats each price category
sells (resolved from the assignment rules)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import Count, Prefetch
from django.utils import timezone

from events.models import (
    CategoryAssignment,
    Event,
    EventStatus,
    PriceCategory,
    Section,
    SectionKind,
    Venue,
    VenueSeat,
)
from events.rules import is_open
from kernel import replica
from waitroom import room_selectors

MAX_RESULTS = 100
# Days outside this range cannot hold an event, and their UTC bounds may not be representable.
SEARCHABLE_DAYS = (date(1970, 1, 2), date(9999, 12, 30))
# No place on Earth is more than 14 hours from UTC: a local day lies within these UTC bounds.
_WIDEST_OFFSET = timedelta(hours=14)


@dataclass(frozen=True)
class CategoryPlaces:
    """What one price category sells: seat ids and standing areas (section id: capacity)."""

    seats: frozenset[int]
    standing: dict[int, int]

    @property
    def count(self) -> int:
        return len(self.seats) + sum(self.standing.values())


def category_places(*, event: Event) -> dict[str, CategoryPlaces]:
    """Each price category's seats and standing areas, by code, from the assignment rules."""
    sections = {s.pk: s for s in Section.objects.filter(venue_id=event.venue_id)}
    rows_of: dict[int, list[tuple[int, int]]] = defaultdict(list)  # section: [(row_index, id)]
    for pk, section_id, row_index in VenueSeat.objects.filter(
        section__venue_id=event.venue_id
    ).values_list("pk", "section_id", "row_index"):
        rows_of[section_id].append((row_index, pk))
    found: dict[str, tuple[set[int], dict[int, int]]] = {
        code: (set(), {})
        for code in PriceCategory.objects.filter(event=event).values_list("code", flat=True)
    }
    for rule in CategoryAssignment.objects.filter(category__event=event).select_related("category"):
        seats, standing = found[rule.category.code]
        section = sections[rule.section_id]
        if section.kind == SectionKind.STANDING:
            standing[section.pk] = section.capacity or 0
            continue
        low, high = _row_bounds(rule, rows_of[section.pk], section.pk)
        seats.update(pk for row_index, pk in rows_of[section.pk] if low <= row_index <= high)
    return {code: CategoryPlaces(frozenset(s), st) for code, (s, st) in found.items()}


def _row_bounds(rule: CategoryAssignment, seats: list[tuple[int, int]], section_id: int):
    if not rule.first_row:
        return 0, 1 << 30
    index = dict(
        VenueSeat.objects.filter(
            section_id=section_id, row__in=[rule.first_row, rule.last_row]
        ).values_list("row", "row_index")
    )
    return index.get(rule.first_row, 1 << 30), index.get(rule.last_row, -1)


def unpriced_places(*, event: Event) -> list[str]:
    """Sections of the venue with seats (or a standing area) no category sells, as text."""
    priced_seats: set[int] = set()
    priced_standing: set[int] = set()
    for places in category_places(event=event).values():
        priced_seats |= places.seats
        priced_standing |= set(places.standing)
    left: dict[int, int] = defaultdict(int)
    for pk, section_id in VenueSeat.objects.filter(section__venue_id=event.venue_id).values_list(
        "pk", "section_id"
    ):
        if pk not in priced_seats:
            left[section_id] += 1
    missing = []
    for section in Section.objects.filter(venue_id=event.venue_id).order_by("position", "name"):
        if section.kind == SectionKind.STANDING:
            if section.pk not in priced_standing:
                missing.append(f"standing area {section.name}")
        elif left[section.pk]:
            n = left[section.pk]
            missing.append(f"{n} seat{'s' if n != 1 else ''} in {section.name}")
    return missing


def local_time(moment: datetime, venue: Venue) -> datetime:
    return moment.astimezone(ZoneInfo(venue.time_zone))


def event_cities() -> list[str]:
    """Cities with a published upcoming event, for the search form."""
    return sorted(
        set(
            Event.objects.filter(status=EventStatus.ON_SALE, starts_at__gt=timezone.now())
            .values_list("venue__city", flat=True)
            .distinct()
        )
    )


def search_events(
    *, city: str = "", day: date | None = None, category: str = ""
) -> list[dict[str, Any]]:
    """The first MAX_RESULTS of `search_events_page` (the events page's list)."""
    return search_events_page(city=city, day=day, category=category, limit=MAX_RESULTS)[0]


def search_events_page(
    *, city: str = "", day: date | None = None, category: str = "", offset: int = 0, limit: int
) -> tuple[list[dict[str, Any]], bool]:
    """Published events still to come, soonest first: in `city` (any case), on `day` in the
    venue's local time, of `category` — each filter only when given.  `limit` of them from
    `offset`, and whether more follow."""
    now = timezone.now()
    events = _events().filter(status=EventStatus.ON_SALE, starts_at__gt=now)
    if city.strip():
        events = events.filter(venue__city__iexact=city.strip())
    if category:
        events = events.filter(category=category)
    if day is not None and not SEARCHABLE_DAYS[0] <= day <= SEARCHABLE_DAYS[1]:
        return [], False
    if day is not None:
        midnight = datetime.combine(day, time.min, tzinfo=ZoneInfo("UTC"))
        events = events.filter(
            starts_at__gte=midnight - _WIDEST_OFFSET,
            starts_at__lt=midnight + timedelta(days=1) + _WIDEST_OFFSET,
        )
    found, matched = [], 0
    with replica.reads_within_lag():  # what is shown, not what is decided
        # Without a day every row matches, so the database skips and stops; with one, the
        # local date is checked here (a venue's zone), so the rows are walked.
        rows = events.order_by("starts_at", "name", "id")
        if day is None:
            rows, matched = rows[offset : offset + limit + 1], offset
        for event in rows.iterator(chunk_size=200) if day is not None else rows:
            if day is not None and local_time(event.starts_at, event.venue).date() != day:
                continue
            if matched >= offset + limit:
                return found, True
            if matched >= offset:
                found.append(_event(event, now=now))
            matched += 1
    return found, False


def event_detail(*, event_id: int) -> dict[str, Any] | None:
    """One published (or cancelled, or finished) event with what each category sells and the
    venue's sections; None for a draft or an unknown id."""
    event = _events().exclude(status=EventStatus.DRAFT).filter(pk=event_id).first()
    if event is None:
        return None
    places = category_places(event=event)
    data = _event(event, now=timezone.now())
    # sale_snapshot builds on this module's `category_places`: imported when first needed.
    from events.sale_snapshot import section_codes, standing_class

    codes = section_codes(venue_id=event.venue_id)
    for category in data["price_categories"]:
        category["places"] = places[category["code"]].count
        # What a hold sends (with `passengers`) for this category's standing places.
        category["standing_areas"] = sorted(
            standing_class(codes[section_id]) for section_id in places[category["code"]].standing
        )
    codes_of: dict[int, set[str]] = defaultdict(set)
    seat_section = dict(
        VenueSeat.objects.filter(section__venue_id=event.venue_id).values_list("pk", "section_id")
    )
    for code, found in places.items():
        for seat in found.seats:
            codes_of[seat_section[seat]].add(code)
        for section_id in found.standing:
            codes_of[section_id].add(code)
    counts = defaultdict(int)
    for section_id in seat_section.values():
        counts[section_id] += 1
    flags = dict.fromkeys(("accessible", "restricted_view"))
    for flag in flags:
        flags[flag] = dict(
            VenueSeat.objects.filter(section__venue_id=event.venue_id, **{flag: True})
            .values("section_id")
            .annotate(n=Count("pk"))
            .values_list("section_id", "n")
        )
    data["sections"] = [
        {
            "name": s.name,
            "kind": s.kind,
            "places": s.capacity if s.kind == SectionKind.STANDING else counts[s.pk],
            "categories": sorted(codes_of[s.pk]),
            "accessible": flags["accessible"].get(s.pk, 0),
            "restricted_view": flags["restricted_view"].get(s.pk, 0),
        }
        for s in Section.objects.filter(venue_id=event.venue_id).order_by("position", "name")
    ]
    return data


def _events():
    return Event.objects.select_related("venue", "sale").prefetch_related(
        Prefetch("price_categories", queryset=PriceCategory.objects.order_by("price", "code")),
        "sale__waiting_rooms",
    )


def _event(event: Event, *, now: datetime) -> dict[str, Any]:
    categories = [
        {
            "code": c.code,
            "name": c.name,
            "price": c.price,
            "currency": c.currency,
            "colour": c.colour,
        }
        for c in event.price_categories.all()
    ]
    cheapest = min(categories, key=lambda c: c["price"], default=None)
    venue = event.venue
    return {
        "id": event.pk,
        "name": event.name,
        "category": event.category,
        "category_label": event.get_category_display(),
        "status": event.status,
        "description": event.description,
        "starts_at": event.starts_at,
        "starts_local": local_time(event.starts_at, venue),
        "on_sale_at": event.on_sale_at,
        "on_sale_local": local_time(event.on_sale_at, venue),
        "sale_open": is_open(event, now=now),
        "venue": {
            "id": venue.pk,
            "name": venue.name,
            "city": venue.city,
            "address": venue.address,
            "time_zone": venue.time_zone,
            "stage_side": venue.stage_side,
        },
        "price_from": (
            {"price": cheapest["price"], "currency": cheapest["currency"]} if cheapest else None
        ),
        "price_categories": categories,
        # At most one (a unique constraint): the room in front of the sale, or None.
        "waiting_room": next(
            (room_selectors.room_summary(room) for room in event.sale.waiting_rooms.all()), None
        ),
    }


def seat_plan(*, event: Event) -> dict[str, Any]:
    """The venue plan drawn for `event`: `venue_plan` with each seat's and standing area's
    price category.  The same drawing the seat picker shows, without live availability."""
    return venue_plan(venue=event.venue, event=event)


def venue_plan(*, venue: Venue, event: Event | None = None) -> dict[str, Any]:
    """Each section's grid of seats (rows front to back, None where the grid has a gap), or
    a standing area with its capacity; with `event`, the price category of each."""
    categories, code_of_seat, code_of_area = {}, {}, {}
    if event is not None:
        categories = {c.code: c for c in event.price_categories.all()}
        places = category_places(event=event)
        code_of_seat = {seat: code for code, found in places.items() for seat in found.seats}
        code_of_area = {area: code for code, found in places.items() for area in found.standing}
    seats_by_section: dict[int, list[VenueSeat]] = defaultdict(list)
    for seat in VenueSeat.objects.filter(section__venue=venue).order_by("y", "x"):
        seats_by_section[seat.section_id].append(seat)
    sections = []
    for section in Section.objects.filter(venue=venue).order_by("position", "name"):
        if section.kind == SectionKind.STANDING:
            code = code_of_area.get(section.pk)
            sections.append(
                {
                    "name": section.name,
                    "kind": section.kind,
                    "capacity": section.capacity,
                    "category": _category(categories.get(code)),
                    "rows": [],
                    "width": 0,
                }
            )
            continue
        seats = seats_by_section[section.pk]
        width = max((s.x for s in seats), default=0)
        lines: dict[int, list[Any]] = {}
        for seat in seats:
            line = lines.setdefault(seat.y, [None] * width)
            line[seat.x - 1] = {
                "id": seat.pk,
                "row": seat.row,
                "number": seat.number,
                "accessible": seat.accessible,
                "restricted_view": seat.restricted_view,
                "category": _category(categories.get(code_of_seat.get(seat.pk))),
            }
        rows = []
        for _y, cells in sorted(lines.items()):
            labels = {c["row"] for c in cells if c}
            rows.append({"label": " / ".join(sorted(labels)), "cells": cells})
        sections.append(
            {
                "name": section.name,
                "kind": section.kind,
                "capacity": len(seats),
                "category": None,
                "rows": rows,
                "width": width,
            }
        )
    return {"stage_side": venue.stage_side, "sections": sections}


def _category(category: PriceCategory | None) -> dict[str, Any] | None:
    if category is None:
        return None
    return {
        "code": category.code,
        "colour": category.colour,
        "price": category.price,
        "currency": category.currency,
    }
