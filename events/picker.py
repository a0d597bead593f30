"""Reads for an event's seat picker page: the live seat map (`events.seat_map`, the same data
the API serves) laid out as the venue plan draws it — sections front to back, rows of cells
with gaps — with words for screen readers, and the live map's snapshot for resyncs."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.conf import settings
from django.utils.translation import gettext

from bookings.live import current_version
from bookings.models import SeatStatus
from bookings.templatetags.sales import seat_words
from events.colours import ink_for
from events.models import Event, Section, SectionKind, Venue
from events.sale_snapshot import is_standing_class
from events.seat_map import seat_map
from languages.formatting import format_money


def max_tickets() -> int:
    return settings.SEATKEEPER["MAX_PASSENGERS"]


def seat_map_snapshot(*, event: Event) -> dict[str, Any]:
    """{version, seats: {seat number: status}} for the page's live map.  The version is read
    before the seats, so the snapshot is never older than the version it carries."""
    version = current_version(event.sale_id)
    plan_version = _plan_version(event)  # before the seats, like the version
    data = seat_map(event_id=event.pk) or {"seats": []}
    return {
        "eventId": event.pk,
        "version": version,
        # What the page drew: another means staff changed the plan (static/js/live-seats.js).
        "planVersion": plan_version,
        "seats": {s["seat_no"]: s["status"] for s in data["seats"]},
    }


def _plan_version(event: Event) -> int:
    return Venue.objects.filter(pk=event.venue_id).values_list("plan_version", flat=True)[0]


def seat_picker(*, event: Event) -> dict[str, Any] | None:
    """The picker page's data: the stage side, seated sections (rows of cells, None for a gap,
    each seat with its engine number, category, words and whether it is free), standing areas
    (class code, places left), the price categories with what each has left, and the classes
    sold out (their waitlists).  None if the event sells nothing."""
    version = current_version(event.sale_id)  # before the seats, like the snapshot
    plan_version = _plan_version(event)
    data = seat_map(event_id=event.pk)
    if data is None:
        return None
    categories = {c["code"]: {**c, "ink": ink_for(c["colour"])} for c in data["categories"]}
    by_section: dict[str, list[dict]] = defaultdict(list)
    for seat in data["seats"]:
        by_section[seat["section"]].append(seat)
    areas = {a["section"]: a for a in data["standing_areas"]}
    sections = []
    for section in Section.objects.filter(venue_id=event.venue_id).order_by("position", "name"):
        if section.kind == SectionKind.STANDING:
            area = areas.get(section.name)
            if area is not None:
                sections.append(_area(section.name, area, categories))
        elif by_section[section.name]:
            sections.append(_seated(section.name, by_section[section.name], categories))
    standing = [s for s in sections if s["kind"] == SectionKind.STANDING]
    free_seats: dict[str, int] = defaultdict(int)
    for seat in data["seats"]:
        free_seats[seat["category"]] += seat["status"] == SeatStatus.AVAILABLE
    sold_out = [
        {"class_code": code, "category": categories[code], "area": None}
        for code, free in sorted(free_seats.items())
        if not free
    ] + [
        {"class_code": a["class_code"], "category": a["category"], "area": a["name"]}
        for a in standing
        if not a["available"]
    ]
    return {
        "version": version,
        "plan_version": plan_version,
        "stage_side": data["stage_side"],
        "sections": sections,
        "seated": any(s["kind"] == SectionKind.SEATED for s in sections),
        "standing": standing,
        "categories": list(categories.values()),
        "sold_out": sold_out,
        "currency": next(iter(categories.values()))["currency"] if categories else "EUR",
        "max_tickets": max_tickets(),
    }


def _seated(name: str, seats: list[dict], categories: dict[str, dict]) -> dict[str, Any]:
    width = max((s["x"] or 0 for s in seats), default=0)
    lines: dict[int, list[Any]] = {}
    for seat in seats:
        if seat["x"] is None or seat["y"] is None:
            continue  # not on the drawing: taken out of the plan by staff (and blocked)
        category = categories[seat["category"]]
        line = lines.setdefault(seat["y"], [None] * width)
        short = seat_words(section=name, row=seat["row"], number=seat["number"])
        line[seat["x"] - 1] = {
            **seat,
            "free": seat["status"] == SeatStatus.AVAILABLE,
            "category": category,
            "short": short,
            "desc": _describe(short, seat, category),
        }
    rows = []
    for _y, cells in sorted(lines.items()):
        labels = sorted({c["row"] for c in cells if c})
        rows.append({"label": " / ".join(labels), "cells": cells})
    return {"name": name, "kind": SectionKind.SEATED, "width": width, "rows": rows}


def _area(name: str, area: dict, categories: dict[str, dict]) -> dict[str, Any]:
    return {
        "name": name,
        "kind": SectionKind.STANDING,
        "class_code": area["fare_class"],
        "category": categories.get(area["category"] or ""),
        "price": area["price"],
        "currency": area["currency"],
        "available": area["available"],
        "max_quantity": min(area["available"], max_tickets()),
    }


def _describe(short: str, seat: dict, category: dict) -> str:
    parts = [
        short,
        gettext("category %(code)s") % {"code": category["code"]},
        format_money(seat["price"], seat["currency"]),
    ]
    if seat["accessible"]:
        parts.append(gettext("wheelchair accessible"))
    if seat["restricted_view"]:
        parts.append(gettext("restricted view"))
    return ", ".join(parts)


def category_of_seats(*, event: Event, seat_numbers: list[str]) -> str | None:
    """The one price category of these seats (for a form posted without JavaScript); "" if
    none of them is a seat of the event (the hold then says which), None for a mix."""
    data = seat_map(event_id=event.pk) or {"seats": []}
    wanted = set(seat_numbers)
    found = {s["category"] for s in data["seats"] if s["seat_no"] in wanted}
    if len(found) > 1:
        return None
    return found.pop() if found else ""


def standing_classes(*, event: Event) -> list[str]:
    """The classes of the event sold by count (its standing areas)."""
    data = seat_map(event_id=event.pk) or {"standing_areas": []}
    return [a["fare_class"] for a in data["standing_areas"] if is_standing_class(a["fare_class"])]


def seated_categories(*, event: Event) -> list[str]:
    """The price categories of the event's seats (what best available picks from)."""
    data = seat_map(event_id=event.pk) or {"seats": []}
    return sorted({s["category"] for s in data["seats"]})


def class_codes(*, event: Event) -> list[str]:
    """Every inventory class of the event's sale: price categories and standing areas."""
    data = seat_map(event_id=event.pk) or {"seats": [], "standing_areas": []}
    return sorted({s["category"] for s in data["seats"]}) + [
        a["fare_class"] for a in data["standing_areas"]
    ]
