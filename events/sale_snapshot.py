"""How an event's venue plan becomes the sale engine's inventory (the snapshot taken when the
event goes on sale; docs/events.md, "Selling").

* Each section gets a short code: its place in the venue's drawing order (position, name),
  from 1.  The plan of a venue with events can no longer change (`VenuePlanInUse`), so the
  code is stable; the snapshot keeps it even so.
* A seat's engine number is `<section code>-<row>-<number>` ("2-F-12"): unique per sale,
  at most 16 characters, and sorted as text by the one lock order (docs/architecture.md).
  The engine seat also keeps the section's name, the row as printed and the seat number.
* Seats are sold in one inventory class per price category, coded like the category ("A").
* Each standing area is its own class `GA-<section code>` ("GA-3"), sold by count like
  the seatless units of a flight, at the price of its category; never overbooked.  (A
  category code cannot contain "-", so the two kinds of code never collide.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bookings.inventory import ClassSpec, SeatSpec
from events.errors import InvalidEvent
from events.models import Event, PriceCategory, Section, SectionKind, VenueSeat
from events.selectors import category_places

SEAT_NO_PATTERN = r"[1-9][0-9]{0,2}-[A-Z0-9]{1,8}-[1-9][0-9]{0,4}"
SEAT_NO_MAX = 16


def section_codes(*, venue_id: int) -> dict[int, int]:
    """Section id -> its short code (1, 2, ... in drawing order)."""
    ids = Section.objects.filter(venue_id=venue_id).order_by("position", "name", "pk")
    return {pk: code for code, pk in enumerate(ids.values_list("pk", flat=True), start=1)}


def seat_no(*, section_code: int, row: str, number: int) -> str:
    return f"{section_code}-{row.upper()}-{number}"


def row_key(*, section_code: int, row: str) -> str:
    """The engine's row of a venue seat (bookings.adjacency): its seat number without the
    seat ("2-F"); its place in the row is the plan's grid column, where aisles leave gaps."""
    return f"{section_code}-{row.upper()}"


def seat_quality(venue_seats, sections: dict[int, Section]) -> dict[int, float]:
    """Venue seat id -> its best-available rank (lower is better): what staff set on the
    seat, else its distance from the stage centre: from the middle of its section's width,
    and as many rows back as it sits behind the rows of the sections in front of it (the
    drawing's order, nearest the stage first)."""
    seats = list(venue_seats)
    width: dict[int, tuple[int, int]] = {}
    depth: dict[int, int] = {}
    for seat in seats:
        low, high = width.get(seat.section_id, (seat.x, seat.x))
        width[seat.section_id] = (min(low, seat.x), max(high, seat.x))
        depth[seat.section_id] = max(depth.get(seat.section_id, 0), seat.y)
    in_front: dict[int, int] = {}
    rows_so_far = 0
    for section in sorted(sections.values(), key=lambda s: (s.position, s.name, s.pk)):
        in_front[section.pk] = rows_so_far
        rows_so_far += depth.get(section.pk, 0)
    quality = {}
    for seat in seats:
        if seat.quality is not None:
            quality[seat.pk] = float(seat.quality)
            continue
        low, high = width[seat.section_id]
        across = seat.x - (low + high) / 2
        back = in_front[seat.section_id] + seat.y
        quality[seat.pk] = round(math.hypot(across, back), 3)
    return quality


def standing_class(section_code: int) -> str:
    return f"GA-{section_code}"


def is_standing_class(code: str) -> bool:
    return code.startswith("GA-")


@dataclass(frozen=True)
class SalePlan:
    classes: list[ClassSpec]
    seats: list[SeatSpec]


def sale_plan(*, event: Event) -> SalePlan:
    """The classes and seats the engine sells for `event`, from its venue plan and price
    categories as they are now.  Raises InvalidEvent for a seat whose number cannot be
    written within the engine's 16 characters."""
    categories = {c.code: c for c in PriceCategory.objects.filter(event=event)}
    codes = section_codes(venue_id=event.venue_id)
    sections = {s.pk: s for s in Section.objects.filter(venue_id=event.venue_id)}
    category_of_seat: dict[int, str] = {}
    classes: list[ClassSpec] = []
    standing: list[ClassSpec] = []
    for code, places in sorted(category_places(event=event).items()):
        category = categories[code]
        category_of_seat.update(dict.fromkeys(places.seats, code))
        if places.seats:
            classes.append(_class(code, len(places.seats), category))
        for section_id, capacity in sorted(places.standing.items(), key=lambda i: codes[i[0]]):
            standing.append(_class(standing_class(codes[section_id]), capacity, category))
    seats = []
    too_long = []
    venue_seats = list(
        VenueSeat.objects.filter(section__venue_id=event.venue_id).order_by(
            "section_id", "row_index", "number"
        )
    )
    quality = seat_quality(venue_seats, sections)
    for seat in venue_seats:
        if seat.pk not in category_of_seat:  # put_event_on_sale refuses unpriced plans first
            continue
        section = sections[seat.section_id]
        number = seat_no(section_code=codes[section.pk], row=seat.row, number=seat.number)
        if len(number) > SEAT_NO_MAX:
            too_long.append(f"{section.name} row {seat.row} seat {seat.number}")
            continue
        seats.append(
            SeatSpec(
                seat_no=number,
                row=seat.row_index,
                letter="",
                fare_class=category_of_seat[seat.pk],
                section=section.name,
                row_label=seat.row.upper(),
                number=seat.number,
                accessible=seat.accessible,
                restricted_view=seat.restricted_view,
                row_key=row_key(section_code=codes[section.pk], row=seat.row),
                place=seat.x,
                quality=quality[seat.pk],
            )
        )
    if too_long:
        raise InvalidEvent(
            f"Seat numbers too long to sell ({', '.join(too_long[:3])}): use shorter row labels."
        )
    return SalePlan(classes=classes + standing, seats=seats)


def _class(code: str, capacity: int, category: PriceCategory) -> ClassSpec:
    return ClassSpec(code=code, capacity=capacity, price=category.price, currency=category.currency)


def standing_sections(*, event: Event) -> dict[str, Section]:
    """Standing class code -> its section, for showing a standing area by name."""
    codes = section_codes(venue_id=event.venue_id)
    return {
        standing_class(codes[s.pk]): s
        for s in Section.objects.filter(venue_id=event.venue_id, kind=SectionKind.STANDING)
    }
