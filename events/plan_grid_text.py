"""A venue's current plan written back as a grid description, so the grid builder opens with
the plan staff already have (and they change one line, not retype the hall).

What cannot be written as a grid (seats imported one by one from a CSV file) is written as
close as a grid gets, under a comment that says the grid would replace those seats."""

from __future__ import annotations

from itertools import groupby, pairwise

from django.utils.translation import gettext as _

from events import plan_parsing
from events.errors import InvalidVenuePlan
from events.models import Section, SectionKind, Venue, VenueSeat


def grid_description(*, venue: Venue) -> str:
    sections = list(venue.sections.order_by("position", "pk").prefetch_related("seats"))
    lines = [f"stage: {venue.stage_side.lower()}"] if venue.stage_side else []
    for section in sections:
        if section.kind == SectionKind.STANDING:
            lines.append(f"Standing {section.name}: capacity {section.capacity}")
        else:
            lines.append(_seated_line(section, list(section.seats.all())))
    if not sections:
        return ""
    text = "\n".join(lines)
    if not _rebuilds(text, sections):
        warning = _(
            "# This plan has seats a grid cannot describe (imported from a CSV file): the "
            "lines below come close, and saving them replaces those seats."
        )
        text = f"{warning}\n{text}"
    return text


def _seated_line(section: Section, seats: list[VenueSeat]) -> str:
    rows = [row for row, _seats in groupby(seats, key=lambda s: s.row)]
    numbers = sorted({s.number for s in seats})
    line = f"Section {section.name}: rows {_range(rows[0], rows[-1])} x seats "
    line += _range(str(numbers[0]), str(numbers[-1])) if numbers else "1"
    first_row = [s for s in seats if s.row == rows[0]]
    aisles = [left.number for left, right in pairwise(first_row) if right.x - left.x > 1]
    if aisles:
        line += "; aisle after " + ",".join(str(n) for n in aisles)
    for flag, attr in (("accessible", "accessible"), ("restricted", "restricted_view")):
        for row, row_seats in groupby(seats, key=lambda s: s.row):
            marked = [s.number for s in row_seats if getattr(s, attr)]
            if marked:
                line += f"; {flag}: row {row} seats {_ranges(marked)}"
    return line


def _range(first: str, last: str) -> str:
    return first if first == last else f"{first}-{last}"


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 7] -> "1-3,7"."""
    parts, start, previous = [], numbers[0], numbers[0]
    for number in numbers[1:]:
        if number != previous + 1:
            parts.append(_range(str(start), str(previous)))
            start = number
        previous = number
    parts.append(_range(str(start), str(previous)))
    return ",".join(parts)


def _rebuilds(text: str, sections: list[Section]) -> bool:
    """Whether the text, parsed, gives exactly the seats and areas the venue has."""
    try:
        plan = plan_parsing.parse_grid(text)
    except InvalidVenuePlan:
        return False

    def have(s: Section):
        return (s.name, s.kind, s.capacity or 0, _seat_set(s.seats.all()))

    def want(spec):
        return (spec.name, spec.kind, spec.capacity or 0, _seat_set(spec.seats))

    return [have(s) for s in sections] == [want(spec) for spec in plan.sections]


def _seat_set(seats) -> frozenset:
    return frozenset((s.row, s.number, s.x, s.y, s.accessible, s.restricted_view) for s in seats)
