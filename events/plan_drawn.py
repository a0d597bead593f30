"""The admin's seat-map editor (static/js/plan-editor.js) in and out: the drawing it posts,
read into the plan builders' `VenuePlan`, and the venue's seated plan as the drawing it opens
with.  The seats are checked by the CSV import's rules (`plan_parsing.plan_from_cells`):
one rule, one place.

The drawing is JSON:

    {"stage_side": "TOP",
     "sections": [{"name": "Stalls",
                   "seats": [{"row": "1", "number": 1, "x": 1, "y": 1,
                              "accessible": false, "restricted_view": false,
                              "quality": null}, ...]}, ...]}

x and y are the seat's cell in its section's grid (from 1); the editor works out rows,
aisles (a column left out), curves and angles (the rows' y bent or tilted by the column)
and posts only where each seat ends up.  Sections keep the order they are written in.
"""

from __future__ import annotations

import json
from typing import Any

from events.errors import InvalidVenuePlan
from events.models import Section, SectionKind, StageSide, Venue, VenueSeat
from events.plan_parsing import CSV_HEADER, VenuePlan, plan_from_cells

MAX_DRAWING_BYTES = 5 * 1024 * 1024
_COLUMNS = len(CSV_HEADER) + 1  # with quality


def parse_drawing(drawing: str | Any) -> VenuePlan:
    """The plan the editor drew, as JSON text (the admin page's form) or already parsed (the
    API's body); InvalidVenuePlan lists every problem (seats by their place in the drawing:
    "Stalls seat 12")."""
    if isinstance(drawing, str):
        if len(drawing.encode()) > MAX_DRAWING_BYTES:
            raise InvalidVenuePlan([f"The drawing is larger than {MAX_DRAWING_BYTES // 1024} KB."])
        try:
            data = json.loads(drawing)
        except ValueError:
            raise InvalidVenuePlan(["The drawing could not be read; reload the editor."]) from None
    else:
        data = drawing
    if not isinstance(data, dict) or not isinstance(data.get("sections"), list):
        raise InvalidVenuePlan(["The drawing has no list of sections; reload the editor."])
    stage_side = data.get("stage_side") or None
    if stage_side is not None and stage_side not in StageSide.values:
        raise InvalidVenuePlan(["The stage is top, bottom, left or right."])
    plan = plan_from_cells(_lines(data["sections"]), columns=_COLUMNS)
    plan.stage_side = stage_side
    return plan


def _lines(sections: list[Any]):
    for s, section in enumerate(sections, start=1):
        if not isinstance(section, dict) or not isinstance(section.get("seats"), list):
            yield f"Section {s}", ["?"]  # one line of the wrong width: reported as such
            continue
        name = str(section.get("name") or "").strip()
        for n, seat in enumerate(section["seats"], start=1):
            label = f"{name or f'Section {s}'} seat {n}"
            yield label, _cells(name, seat) if isinstance(seat, dict) else ["?"]


def _cells(section: str, seat: dict[str, Any]) -> list[str]:
    quality = seat.get("quality")
    return [
        section,
        str(seat.get("row", "")),
        str(seat.get("number", "")),
        str(seat.get("x", "")),
        str(seat.get("y", "")),
        "yes" if seat.get("accessible") is True else "no",
        "yes" if seat.get("restricted_view") is True else "no",
        "" if quality in (None, "") else str(quality),
    ]


def venue_drawing(*, venue: Venue) -> dict[str, Any]:
    """The venue's seated sections as the editor's drawing (standing areas are not drawn:
    they stay as they are, as with the CSV import)."""
    sections = list(
        Section.objects.filter(venue=venue, kind=SectionKind.SEATED).order_by("position", "name")
    )
    seats: dict[int, list[dict[str, Any]]] = {s.pk: [] for s in sections}
    for seat in VenueSeat.objects.filter(section__in=sections).order_by(
        "section_id", "row_index", "number"
    ):
        seats[seat.section_id].append(
            {
                "row": seat.row,
                "number": seat.number,
                "x": seat.x,
                "y": seat.y,
                "accessible": seat.accessible,
                "restricted_view": seat.restricted_view,
                "quality": seat.quality,
            }
        )
    return {
        "stage_side": venue.stage_side,
        "sections": [{"name": s.name, "seats": seats[s.pk]} for s in sections],
    }
