"""Reads of an event's sale for staff: its inventory per price category (and standing area),
and its seats as a map.  The numbers are the engine's (bookings.Inventory, bookings.Seat):
what is really sold and held, not the venue plan."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count
from django.utils.translation import gettext

from bookings.models import Inventory, Seat, SeatStatus
from events.models import CategoryAssignment, Event, PriceCategory
from events.sale_snapshot import standing_sections


@dataclass(frozen=True)
class ClassLine:
    code: str  # the engine's class code: "A", "GA-3"
    label: str  # "A — Front stalls", "Standing — Floor (GA)"
    colour: str
    capacity: int  # sellable units now (blocked seats are no longer counted)
    sold: int
    held: int
    available: int
    blocked: int


def inventory_overview(*, event: Event) -> list[ClassLine]:
    """One line per class of the event's sale: seated categories first, then standing areas."""
    if event.sale_id is None:
        return []
    categories = {c.code: c for c in PriceCategory.objects.filter(event=event)}
    areas = standing_sections(event=event)
    area_category = {
        rule.section_id: rule.category
        for rule in CategoryAssignment.objects.filter(
            category__event=event, section__in=list(areas.values())
        ).select_related("category")
    }
    blocked = dict(
        Seat.objects.filter(sale_id=event.sale_id, status=SeatStatus.BLOCKED)
        .values("fare_class")
        .annotate(n=Count("pk"))
        .values_list("fare_class", "n")
    )
    lines = []
    for inv in Inventory.objects.filter(sale_id=event.sale_id):
        if inv.fare_class in areas:
            area = areas[inv.fare_class]
            category = area_category.get(area.pk)
            label = gettext("Standing — %(area)s") % {"area": area.name}
            label += f" ({category.code})" if category else ""
        else:
            category = categories.get(inv.fare_class)
            label = f"{category.code} — {category.name}" if category else inv.fare_class
        lines.append(
            ClassLine(
                code=inv.fare_class,
                label=label,
                colour=category.colour if category else "#888888",
                capacity=inv.capacity,
                sold=inv.sold,
                held=inv.held,
                available=inv.available,
                blocked=blocked.get(inv.fare_class, 0),
            )
        )
    lines.sort(key=lambda line: (line.code in areas, line.code))
    return lines


@dataclass
class MapRow:
    label: str
    seats: list[Seat] = field(default_factory=list)


@dataclass
class MapSection:
    name: str
    rows: list[MapRow] = field(default_factory=list)


def seat_map(*, event: Event) -> list[MapSection]:
    """The sale's seats by section (in the plan's drawing order), row and number, each with
    its engine status; `colour` set on each seat from its price category."""
    if event.sale_id is None:
        return []
    colours = dict(PriceCategory.objects.filter(event=event).values_list("code", "colour"))
    seats = list(
        Seat.objects.filter(sale_id=event.sale_id).only(
            "seat_no", "section", "row", "row_label", "number", "fare_class", "status"
        )
    )
    # seat_no is "<section code>-<row>-<number>": the section code is the drawing order.
    seats.sort(key=lambda s: (int(s.seat_no.split("-", 1)[0]), s.row, s.number or 0))
    sections: list[MapSection] = []
    for seat in seats:
        seat.colour = colours.get(seat.fare_class, "#888888")
        if not sections or sections[-1].name != seat.section:
            sections.append(MapSection(seat.section))
        rows = sections[-1].rows
        if not rows or rows[-1].label != seat.row_label:
            rows.append(MapRow(seat.row_label))
        rows[-1].seats.append(seat)
    return sections
