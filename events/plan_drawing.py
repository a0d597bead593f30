"""The event page's plan before the sale opens, in the seat picker's shape (events.picker), so
customers meet one drawing of the plan (templates/events/_seat_plan.html) before and during
the sale: the same side for the stage, rows front to back, the same colours and marks."""

from __future__ import annotations

from typing import Any

from bookings.templatetags.sales import seat_words
from events.colours import ink_for
from events.models import Event, SectionKind
from events.sale_snapshot import seat_no as engine_seat_no
from events.sale_snapshot import section_codes
from events.selectors import seat_plan

UNPRICED = {"code": "", "colour": "#6b7280", "price": None, "currency": ""}


def presale_drawing(*, event: Event) -> dict[str, Any]:
    """{stage_side, sections}: each seated section's rows of cells (None for a gap) with the
    seat's category (and the ink drawn on it) and words; each standing area's capacity."""
    plan = seat_plan(event=event)
    codes = section_codes(venue_id=event.venue_id)
    ids = {name: pk for pk, name in _section_names(event).items()}
    sections = []
    for section in plan["sections"]:
        if section["kind"] == SectionKind.STANDING:
            sections.append({**section, "category": _inked(section["category"])})
            continue
        code = codes.get(ids.get(section["name"]))
        rows = [
            {
                "label": row["label"],
                "cells": [
                    _cell(section["name"], code, cell) if cell else None for cell in row["cells"]
                ],
            }
            for row in section["rows"]
        ]
        sections.append({**section, "rows": rows})
    return {"stage_side": plan["stage_side"], "sections": sections}


def _section_names(event: Event) -> dict[int, str]:
    return dict(event.venue.sections.values_list("pk", "name"))


def _inked(category: dict[str, Any] | None) -> dict[str, Any] | None:
    return {**category, "ink": ink_for(category["colour"])} if category else None


def _cell(section: str, code: int | None, cell: dict[str, Any]) -> dict[str, Any]:
    return {
        **cell,
        "seat_no": (
            engine_seat_no(section_code=code, row=cell["row"], number=cell["number"])
            if code is not None
            else ""
        ),
        "short": seat_words(section=section, row=cell["row"], number=cell["number"]),
        "category": _inked(cell["category"] or UNPRICED),
    }
