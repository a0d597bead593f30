"""Demo data for the events catalogue: two venues with real plans and a handful of events,
one of them going on sale in two hours.  Idempotent: what exists is kept."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from events.models import Event, EventCategory, Venue
from events.services import (
    AssignmentSpec,
    PriceCategorySpec,
    assign_categories,
    create_event,
    open_missing_sale,
    put_event_on_sale,
)
from events.venues import build_venue_plan_from_grid
from waitroom.models import WaitingRoom
from waitroom.staff import open_waiting_room

CONCERT_HALL = """
stage: top
Section Stalls: rows 1-12 x seats 1-24; aisle after 12; accessible: row 12 seats 1-4, 21-24
Section Balcony: rows A-F x seats 1-20; restricted: row F seats 1-2, 19-20
Standing Floor: capacity 300
"""

ARENA = """
stage: bottom
Section North: rows 1-15 x seats 1-30; aisle after 10, 20; accessible: row 1 seats 1-6
Section South: rows 1-15 x seats 1-30; aisle after 10, 20; restricted: row 15
Standing Infield: capacity 1500
"""


@dataclass(frozen=True)
class DemoQueue:
    """The waiting room in front of a flash sale: admission rate and most shoppers inside."""

    admit_per_minute: int = 60
    max_inside: int = 200
    stay_seconds: int = 600


@dataclass(frozen=True)
class DemoEvent:
    name: str
    venue: str
    category: str
    in_days: int
    at: time
    sale_opens_in: timedelta  # negative: already open
    prices: tuple[PriceCategorySpec, ...]
    rules: tuple[AssignmentSpec, ...]
    description: str = ""
    queue: DemoQueue | None = None  # behind the waiting room


HALL_PRICES = (
    PriceCategorySpec("A", "Front stalls", Decimal("89.00"), "EUR", "#b91c1c"),
    PriceCategorySpec("B", "Rear stalls", Decimal("59.00"), "EUR", "#1d4ed8"),
    PriceCategorySpec("C", "Balcony", Decimal("39.00"), "EUR", "#7c3aed"),
    PriceCategorySpec("GA", "Standing floor", Decimal("29.00"), "EUR", "#15803d"),
)
HALL_RULES = (
    AssignmentSpec("A", "Stalls", "1", "6"),
    AssignmentSpec("B", "Stalls", "7", "12"),
    AssignmentSpec("C", "Balcony"),
    AssignmentSpec("GA", "Floor"),
)
ARENA_PRICES = (
    PriceCategorySpec("A", "Lower tier", Decimal("75.00"), "EUR", "#b91c1c"),
    PriceCategorySpec("B", "Upper tier", Decimal("45.00"), "EUR", "#1d4ed8"),
    PriceCategorySpec("GA", "Infield", Decimal("35.00"), "EUR", "#15803d"),
)
ARENA_RULES = (
    AssignmentSpec("A", "North", "1", "7"),
    AssignmentSpec("B", "North", "8", "15"),
    AssignmentSpec("A", "South", "1", "7"),
    AssignmentSpec("B", "South", "8", "15"),
    AssignmentSpec("GA", "Infield"),
)

VENUES = [
    ("Spreehalle", "Berlin", "Am Spreeufer 5", "Europe/Berlin", CONCERT_HALL),
    ("Nevsky Arena", "Saint Petersburg", "Nevsky prospekt 100", "Europe/Moscow", ARENA),
]

EVENTS = [
    DemoEvent(
        "Berlin Philharmonic Late Night",
        "Spreehalle",
        EventCategory.CONCERT,
        12,
        time(21, 0),
        -timedelta(days=10),
        HALL_PRICES,
        HALL_RULES,
        "Late-night programme: Bach and Glass.",
    ),
    DemoEvent(
        "Stand-up Spree",
        "Spreehalle",
        EventCategory.COMEDY,
        5,
        time(20, 0),
        -timedelta(days=3),
        HALL_PRICES,
        HALL_RULES,
    ),
    DemoEvent(
        "Midnight cinema: Solaris",
        "Spreehalle",
        EventCategory.CINEMA,
        8,
        time(23, 30),
        -timedelta(days=1),
        HALL_PRICES[:3],
        (*HALL_RULES[:2], AssignmentSpec("C", "Balcony"), AssignmentSpec("C", "Floor")),
    ),
    DemoEvent(
        "Zenit vs Spartak",
        "Nevsky Arena",
        EventCategory.SPORT,
        20,
        time(19, 0),
        -timedelta(days=7),
        ARENA_PRICES,
        ARENA_RULES,
    ),
    DemoEvent(
        "White Nights Festival — opening",
        "Nevsky Arena",
        EventCategory.CONCERT,
        40,
        time(20, 0),
        timedelta(hours=2),  # on sale soon: the flash sale
        ARENA_PRICES,
        ARENA_RULES,
        "The opening night. Tickets go on sale soon; expect a queue.",
        DemoQueue(),
    ),
]


@dataclass
class EventDemoResult:
    venues: int
    events_created: int
    events_total: int


def load_event_demo(*, today: date | None = None) -> EventDemoResult:
    """Venues get their plan once; each demo event is created (and published) once."""
    now = timezone.now()
    today = today or now.date()
    created = 0
    with transaction.atomic():
        venues = {}
        for name, city, address, tz, plan in VENUES:
            venue, _ = Venue.objects.get_or_create(
                name=name, city=city, defaults={"address": address, "time_zone": tz}
            )
            if not venue.sections.exists():
                build_venue_plan_from_grid(venue=venue, description=plan)
            venues[name] = venue
        for spec in EVENTS:
            venue = venues[spec.venue]
            event = Event.objects.filter(venue=venue, name=spec.name).first()
            if event is not None:
                # Loaded before events were sold: open its sale now.
                open_missing_sale(event_id=event.pk)
            else:
                event = _create(spec, venue=venue, today=today, now=now)
                created += 1
            if spec.queue:
                _protect(event_id=event.pk, queue=spec.queue)
    return EventDemoResult(
        venues=len(venues), events_created=created, events_total=Event.objects.count()
    )


def _create(spec: DemoEvent, *, venue: Venue, today: date, now: datetime) -> Event:
    zone = ZoneInfo(venue.time_zone)
    starts = datetime.combine(today + timedelta(days=spec.in_days), spec.at, zone)
    event = create_event(
        venue=venue,
        name=spec.name,
        category=spec.category,
        starts_at=starts,
        on_sale_at=now + spec.sale_opens_in,
        price_categories=spec.prices,
        description=spec.description,
    )
    assign_categories(event_id=event.pk, assignments=spec.rules)
    put_event_on_sale(event_id=event.pk)
    return event


def _protect(*, event_id: int, queue: DemoQueue) -> None:
    """The event's sale behind the waiting room, opening with the sale (once)."""
    event = Event.objects.get(pk=event_id)
    if event.sale_id is None or WaitingRoom.objects.filter(sale_id=event.sale_id).exists():
        return
    open_waiting_room(
        sale_id=event.sale_id,
        opens_at=event.on_sale_at,
        admit_per_minute=queue.admit_per_minute,
        max_inside=queue.max_inside,
        stay_seconds=queue.stay_seconds,
    )
