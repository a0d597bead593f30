"""Reading a venue's seating plan from what staff type or upload.  Pure parsing: nothing here
touches the database; `events.services` writes the result, all or nothing.

The grid description, one instruction per line (blank lines and lines starting with # are
ignored, keywords are case-insensitive):

    stage: top
    Section Stalls: rows 1-20 x seats 1-30; aisle after 10, 20; accessible: row 20 seats 1-4
    Section Balcony: rows A-F x seats 1-24; restricted: row F seats 1-3, 22-24; restricted: row E
    Standing Floor: capacity 800

* ``stage: top|bottom|left|right`` — where the stage is drawn (optional; default top).
* ``Section <name>: rows <first>-<last> x seats <first>-<last>`` — a seated block.  Rows are
  numbers (``1-20``) or single letters (``A-F``), listed front to back: the first row is the
  one nearest the stage.  ``row 5`` is a single row.  Then optional clauses, separated by ``;``:
  ``aisle after <seat>[, <seat>...]`` leaves a gap in the drawing after those seat numbers;
  ``accessible: row[s] <row>[-<row>] [seats <ranges>]`` and ``restricted: ...`` flag seats
  (all seats of the rows when ``seats`` is left out).  A clause may be repeated.
* ``Standing <name>: capacity <n>`` — a general-admission area sold by count.

Sections are drawn in the order they are written, the first nearest the stage.

The CSV import lists seats one per line under the header
``section,row,number,x,y,accessible,restricted_view`` (and optionally ``,quality``: the
seat's best-available score, lower is better, empty for the distance from the stage centre);
accessible and restricted_view are yes/no, true/false, 1/0 or empty (no).  Rows are ordered
front to back by their smallest y.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from events.errors import InvalidVenuePlan
from events.models import SectionKind, StageSide

MAX_ROWS_PER_SECTION = 200
MAX_SEATS_PER_ROW = 500
MAX_SEATS_PER_VENUE = 100_000
MAX_STANDING_CAPACITY = 200_000
MAX_GRID = 32767  # PositiveSmallIntegerField
CSV_HEADER = ("section", "row", "number", "x", "y", "accessible", "restricted_view")
ROW_LABEL = re.compile(r"^[A-Za-z0-9]{1,8}$")


@dataclass
class SeatSpec:
    row: str
    row_index: int
    number: int
    x: int
    y: int
    accessible: bool = False
    restricted_view: bool = False
    quality: float | None = None


@dataclass
class SectionSpec:
    name: str
    kind: str
    position: int
    capacity: int | None = None
    seats: list[SeatSpec] = field(default_factory=list)


@dataclass
class VenuePlan:
    sections: list[SectionSpec]
    stage_side: str | None = None

    @property
    def seat_count(self) -> int:
        return sum(len(s.seats) for s in self.sections)


# --- the grid description ---------------------------------------------------------------------

_HEAD = re.compile(r"^(section|standing)\s+(.+?)\s*:\s*(.*)$", re.IGNORECASE)
_STAGE = re.compile(r"^stage\s*:\s*(\w+)$", re.IGNORECASE)
_ROW = r"(\d{1,3}|[A-Za-z])"
_BLOCK = re.compile(
    rf"^rows?\s+{_ROW}(?:\s*-\s*{_ROW})?\s*x\s*seats?\s+(\d{{1,3}})(?:\s*-\s*(\d{{1,3}}))?$",
    re.IGNORECASE,
)
_CAPACITY = re.compile(r"^capacity\s+(\d{1,7})$", re.IGNORECASE)
_AISLE = re.compile(r"^aisles?\s+after\s+(\d{1,3}(?:\s*,\s*\d{1,3})*)$", re.IGNORECASE)
_FLAG = re.compile(
    rf"^(accessible|restricted)\s*:?\s*rows?\s+{_ROW}(?:\s*-\s*{_ROW})?"
    r"(?:\s+seats?\s+(\d{1,3}(?:\s*-\s*\d{1,3})?(?:\s*,\s*\d{1,3}(?:\s*-\s*\d{1,3})?)*))?$",
    re.IGNORECASE,
)


class _LineError(Exception):
    pass


def parse_grid(description: str) -> VenuePlan:
    """The plan a grid description describes; InvalidVenuePlan lists every bad line."""
    problems: list[str] = []
    sections: list[SectionSpec] = []
    stage_side: str | None = None
    seen: dict[str, int] = {}
    for number, raw in enumerate(description.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            if match := _STAGE.match(line):
                side = match[1].upper()
                if side not in StageSide.values:
                    raise _LineError("the stage is top, bottom, left or right.")
                stage_side = side
                continue
            head = _HEAD.match(line)
            if head is None:
                raise _LineError(
                    'expected "Section <name>: rows 1-10 x seats 1-20", '
                    '"Standing <name>: capacity 500" or "stage: top".'
                )
            kind, name, body = head[1].lower(), head[2].strip(), head[3].strip()
            if len(name) > 60:
                raise _LineError("a section name has at most 60 characters.")
            if name.lower() in seen:
                raise _LineError(f'section "{name}" is already on line {seen[name.lower()]}.')
            seen[name.lower()] = number
            position = len(sections) + 1
            if kind == "standing":
                sections.append(_standing(name, body, position))
            else:
                sections.append(_seated(name, body, position))
        except _LineError as error:
            problems.append(f"Line {number}: {error}")
    if not sections and not problems:
        problems.append("The description has no sections.")
    _check_size(sections, problems)
    if problems:
        raise InvalidVenuePlan(problems)
    return VenuePlan(sections=sections, stage_side=stage_side)


def _standing(name: str, body: str, position: int) -> SectionSpec:
    match = _CAPACITY.match(body)
    if match is None:
        raise _LineError('a standing area is written "Standing <name>: capacity 500".')
    capacity = int(match[1])
    if not 1 <= capacity <= MAX_STANDING_CAPACITY:
        raise _LineError(f"a standing capacity is between 1 and {MAX_STANDING_CAPACITY}.")
    return SectionSpec(name=name, kind=SectionKind.STANDING, position=position, capacity=capacity)


def _seated(name: str, body: str, position: int) -> SectionSpec:
    clauses = [c.strip() for c in body.split(";")]
    block = _BLOCK.match(clauses[0])
    if block is None:
        raise _LineError('a section starts with "rows 1-10 x seats 1-20" (or "rows A-F x ...").')
    rows = _row_labels(block[1], block[2] or block[1])
    first_seat, last_seat = int(block[3]), int(block[4] or block[3])
    if not 1 <= first_seat <= last_seat:
        raise _LineError(f"seats {first_seat}-{last_seat} must count up from 1 or more.")
    if last_seat - first_seat + 1 > MAX_SEATS_PER_ROW:
        raise _LineError(f"a row has at most {MAX_SEATS_PER_ROW} seats.")
    numbers = range(first_seat, last_seat + 1)
    aisles: set[int] = set()
    accessible: set[tuple[str, int]] = set()
    restricted: set[tuple[str, int]] = set()
    for clause in clauses[1:]:
        if not clause:
            continue
        if aisle := _AISLE.match(clause):
            after = {int(n) for n in aisle[1].split(",")}
            if not after <= set(numbers[:-1]):
                raise _LineError(
                    f"an aisle comes after a seat from {first_seat} to {last_seat - 1}."
                )
            aisles |= after
        elif flag := _FLAG.match(clause):
            flagged_rows = _row_labels(flag[2], flag[3] or flag[2])
            if not set(flagged_rows) <= set(rows):
                raise _LineError(
                    f"{flag[1].lower()}: row {flag[2]}-{flag[3] or flag[2]} is not in this section."
                )
            seats = _number_ranges(flag[4]) if flag[4] else set(numbers)
            if not seats <= set(numbers):
                raise _LineError(
                    f"{flag[1].lower()}: seats must be within {first_seat}-{last_seat}."
                )
            target = accessible if flag[1].lower() == "accessible" else restricted
            target |= {(r, n) for r in flagged_rows for n in seats}
        else:
            raise _LineError(
                f'cannot read "{clause}": expected "aisle after 10", '
                '"accessible: row 10 seats 1-4" or "restricted: row F".'
            )
    section = SectionSpec(name=name, kind=SectionKind.SEATED, position=position)
    for row_index, row in enumerate(rows, start=1):
        for number in numbers:
            gaps = sum(1 for a in aisles if a < number)
            section.seats.append(
                SeatSpec(
                    row=row,
                    row_index=row_index,
                    number=number,
                    x=number - first_seat + 1 + gaps,
                    y=row_index,
                    accessible=(row, number) in accessible,
                    restricted_view=(row, number) in restricted,
                )
            )
    return section


def _row_labels(first: str, last: str) -> list[str]:
    if first.isdigit() != last.isdigit():
        raise _LineError(f"rows {first}-{last} mix numbers and letters.")
    if first.isdigit():
        start, end = int(first), int(last)
        if not 1 <= start <= end:
            raise _LineError(f"rows {first}-{last} must count up from 1 or more.")
        labels = [str(n) for n in range(start, end + 1)]
    else:
        start, end = ord(first.upper()), ord(last.upper())
        if start > end:
            raise _LineError(f"rows {first}-{last} must go forward through the alphabet.")
        labels = [chr(c) for c in range(start, end + 1)]
    if len(labels) > MAX_ROWS_PER_SECTION:
        raise _LineError(f"a section has at most {MAX_ROWS_PER_SECTION} rows.")
    return labels


def _number_ranges(text: str) -> set[int]:
    numbers: set[int] = set()
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        start, end = int(first), int(last or first)
        if start > end:
            raise _LineError(f"seats {start}-{end} must count up.")
        numbers |= set(range(start, end + 1))
    return numbers


def _check_size(sections: Iterable[SectionSpec], problems: list[str]) -> None:
    total = sum(len(s.seats) for s in sections)
    if total > MAX_SEATS_PER_VENUE:
        problems.append(f"The plan has {total} seats; a venue has at most {MAX_SEATS_PER_VENUE}.")


# --- the CSV import ---------------------------------------------------------------------------

_TRUE, _FALSE = {"1", "yes", "y", "true", "t", "x"}, {"", "0", "no", "n", "false", "f"}


def parse_csv(content: bytes | str) -> VenuePlan:
    """The seated sections a CSV file lists; InvalidVenuePlan lists every bad line."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise InvalidVenuePlan(["The file is not UTF-8 text."]) from error
    reader = csv.reader(io.StringIO(content))
    header = tuple(h.strip().lower() for h in next(reader, None) or ())
    if header not in (CSV_HEADER, (*CSV_HEADER, "quality")):
        raise InvalidVenuePlan([f"Line 1: the header must be {','.join(CSV_HEADER)}[,quality]."])
    lines = ((f"Line {reader.line_num}", cells) for cells in reader)
    return plan_from_cells(lines, columns=len(header))


def plan_from_cells(lines: Iterable[tuple[str, list[str]]], *, columns: int) -> VenuePlan:
    """The seated sections that seat lines (label, CSV-shaped cells) list, checked by the one
    set of seat rules: the CSV import and the admin's drawing editor (events.plan_drawn) both
    come here.  InvalidVenuePlan lists every bad line, by its label."""
    problems: list[str] = []
    by_section: dict[str, list[tuple[str, SeatSpec]]] = defaultdict(list)
    names: dict[str, str] = {}  # lower-case -> as first written
    for line, cells in lines:
        if not any(c.strip() for c in cells):
            continue
        try:
            section, seat = _csv_seat(cells, columns=columns)
        except _LineError as error:
            problems.append(f"{line}: {error}")
            continue
        key = section.lower()
        names.setdefault(key, section)
        by_section[key].append((line, seat))
    sections = []
    for position, (key, seats) in enumerate(by_section.items(), start=1):
        problems += _csv_duplicates(names[key], seats)
        sections.append(
            SectionSpec(
                name=names[key],
                kind=SectionKind.SEATED,
                position=position,
                seats=_with_row_order([seat for _, seat in seats]),
            )
        )
    if not sections and not problems:
        problems.append("The file lists no seats.")
    _check_size(sections, problems)
    if problems:
        raise InvalidVenuePlan(problems)
    return VenuePlan(sections=sections)


def _csv_seat(cells: list[str], *, columns: int) -> tuple[str, SeatSpec]:
    if len(cells) != columns:
        raise _LineError(f"expected {columns} columns, found {len(cells)}.")
    section, row, number, x, y, accessible, restricted, *quality = (c.strip() for c in cells)
    try:
        score = float(quality[0]) if quality and quality[0] else None
    except ValueError:
        raise _LineError(f'quality "{quality[0]}" must be a number.') from None
    if score is not None and not math.isfinite(score):
        raise _LineError(f'quality "{quality[0]}" must be a finite number.')
    if not section or len(section) > 60:
        raise _LineError("the section name is required (at most 60 characters).")
    if not ROW_LABEL.match(row):
        raise _LineError(f'row "{row}" must be 1 to 8 letters or digits.')
    return section, SeatSpec(
        row=row.upper(),
        row_index=0,  # set once the section's rows are known
        number=_csv_int("number", number),
        x=_csv_int("x", x),
        y=_csv_int("y", y),
        accessible=_csv_bool("accessible", accessible),
        restricted_view=_csv_bool("restricted_view", restricted),
        quality=score,
    )


def _csv_int(name: str, value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= MAX_GRID:
        raise _LineError(f'{name} "{value}" must be a whole number from 1 to {MAX_GRID}.')
    return int(value)


def _csv_bool(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise _LineError(f'{name} "{value}" must be yes or no.')


def _csv_duplicates(section: str, seats: list[tuple[str, SeatSpec]]) -> list[str]:
    problems = []
    places: dict[tuple, str] = {}
    for line, seat in seats:
        for key, what in (
            (("seat", seat.row, seat.number), f"row {seat.row} seat {seat.number}"),
            (("xy", seat.x, seat.y), f"position x={seat.x}, y={seat.y}"),
        ):
            if key in places:
                problems.append(f"{line}: {section} {what} is already on {places[key].lower()}.")
            else:
                places[key] = line
    return problems


def _with_row_order(seats: list[SeatSpec]) -> list[SeatSpec]:
    """Rows front to back by their smallest y (then by label): row_index 1 is the first."""
    front: dict[str, int] = {}
    for seat in seats:
        front[seat.row] = min(front.get(seat.row, MAX_GRID + 1), seat.y)
    order = sorted(front, key=lambda row: (front[row], _natural(row)))
    index = {row: i for i, row in enumerate(order, start=1)}
    for seat in seats:
        seat.row_index = index[seat.row]
    return seats


def _natural(label: str) -> tuple:
    return (0, int(label), "") if label.isdigit() else (1, 0, label)
