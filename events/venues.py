"""Writes on venues: creating one and building its plan from a grid description or a CSV
upload (the formats are in `events.plan_parsing`).

Each service is one transaction that locks the venue first, so two staff members saving at
once serialise instead of interleaving.
"""

from __future__ import annotations

from typing import IO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils.translation import gettext

from events import plan_drawn, plan_editing, plan_parsing
from events.errors import (
    InvalidEvent,
    VenuePlanChanged,
    VenuePlanInUse,
)
from events.models import (
    Event,
    Section,
    SectionKind,
    Venue,
)
from events.plan_editing import write_seats

MAX_CSV_BYTES = 5 * 1024 * 1024


def create_venue(
    *, name: str, city: str, time_zone: str, address: str = "", stage_side: str | None = None
) -> Venue:
    check_time_zone(time_zone)
    if not name.strip() or not city.strip():
        raise InvalidEvent("A venue needs a name and a city.")
    fields = {"address": address.strip(), "time_zone": time_zone}
    if stage_side:
        fields["stage_side"] = stage_side
    try:
        with transaction.atomic():
            return Venue.objects.create(name=name.strip(), city=city.strip(), **fields)
    except IntegrityError as error:
        raise InvalidEvent(f"There is already a venue {name} in {city}.") from error


def build_venue_plan_from_grid(*, venue: Venue, description: str) -> plan_parsing.VenuePlan:
    """Replace the venue's whole plan (seated sections and standing areas) with the one the
    grid description writes (the format is in `events.plan_parsing`).  All or nothing: any bad line
    raises InvalidVenuePlan listing every problem, and the old plan stays."""
    plan = plan_parsing.parse_grid(description)
    _replace_plan(venue=venue, plan=plan, keep_standing=False)
    return plan


def import_venue_plan_csv(
    *, venue: Venue, file: IO[bytes] | IO[str] | bytes | str
) -> plan_parsing.VenuePlan:
    """Replace the venue's seated sections with the seats the CSV lists (header
    section,row,number,x,y,accessible,restricted_view); standing areas stay as they are.
    All or nothing, like the grid builder."""
    content = file if isinstance(file, (bytes, str)) else file.read(MAX_CSV_BYTES + 1)
    if len(content) > MAX_CSV_BYTES:
        raise plan_parsing.InvalidVenuePlan(
            [f"The file is larger than {MAX_CSV_BYTES // 1024} KB."]
        )
    plan = plan_parsing.parse_csv(content)
    _replace_plan(venue=venue, plan=plan, keep_standing=True)
    return plan


def _replace_plan(*, venue: Venue, plan: plan_parsing.VenuePlan, keep_standing: bool) -> None:
    with transaction.atomic():
        # The venue row lock serialises plan builders, and events created meanwhile (which
        # lock it too): a plan never changes under an event that sells it.
        locked = Venue.objects.select_for_update().get(pk=venue.pk)
        if Event.objects.filter(venue=locked).exists():
            raise VenuePlanInUse(
                f"{locked} already has events; its plan is what they sell and cannot be "
                "rebuilt. Create a new venue for a different layout."
            )
        old = Section.objects.filter(venue=locked)
        kept: list[Section] = []
        if keep_standing:
            kept = list(old.filter(kind=SectionKind.STANDING))
            clash = {s.name.lower() for s in kept} & {s.name.lower() for s in plan.sections}
            if clash:
                raise plan_parsing.InvalidVenuePlan(
                    [f'"{name}" is a standing area of this venue.' for name in sorted(clash)]
                )
            old = old.exclude(kind=SectionKind.STANDING)
        old.delete()
        _count_the_save(venue, locked)
        offset = max((s.position for s in kept), default=0)
        for spec in plan.sections:
            section = Section.objects.create(
                venue=locked,
                name=spec.name,
                kind=spec.kind,
                position=offset + spec.position,
                capacity=spec.capacity,
            )
            write_seats(section=section, seats=spec.seats)
        _set_stage_side(venue, locked, plan)


def save_drawn_plan(
    *, venue: Venue, drawing: str | dict, expected_version: int | None = None
) -> plan_parsing.VenuePlan:
    """Save the seat-map editor's drawing (events.plan_drawn: the admin page posts it as
    JSON text, the API as parsed JSON) as the venue's seated sections; standing areas stay,
    as with the CSV import.  All or nothing, the seats checked by the CSV import's rules.  A
    venue with no events has its seated plan replaced; one with events is changed in place
    (`events.plan_editing`): seats may be added, moved, flagged and scored, and one held or
    sold is never taken out of a plan on sale (VenuePlanSeatsInUse).

    `expected_version`: the plan version the drawing was made on; another (someone saved
    since) raises VenuePlanChanged and nothing is written.  Each save counts the version up
    (`venue.plan_version` then holds the new one)."""
    plan = plan_drawn.parse_drawing(drawing)
    with transaction.atomic():
        locked = Venue.objects.select_for_update().get(pk=venue.pk)
        if expected_version is not None and locked.plan_version != expected_version:
            raise VenuePlanChanged(
                gettext(
                    "The plan of %(venue)s was saved since this drawing was made (version "
                    "%(now)d, not %(then)d): reload it and draw the change again."
                )
                % {"venue": locked, "now": locked.plan_version, "then": expected_version},
                planVersion=locked.plan_version,
            )
        # Then the events (after the venue, as creating one does): one going on sale now
        # either snapshots the new plan or is already on sale and brought along.
        events = list(Event.objects.select_for_update().filter(venue=locked).order_by("pk"))
        if not events:
            _replace_plan(venue=venue, plan=plan, keep_standing=True)
            return plan
        plan_editing.change_plan_in_use(venue=locked, plan=plan, events=events)
        _set_stage_side(venue, locked, plan)
        _count_the_save(venue, locked)
    return plan


def _count_the_save(venue: Venue, locked: Venue) -> None:
    # Under the venue's row lock: no other save can count in between.
    Venue.objects.filter(pk=locked.pk).update(plan_version=F("plan_version") + 1)
    venue.plan_version = locked.plan_version = locked.plan_version + 1


def _set_stage_side(venue: Venue, locked: Venue, plan: plan_parsing.VenuePlan) -> None:
    if plan.stage_side and plan.stage_side != locked.stage_side:
        Venue.objects.filter(pk=locked.pk).update(stage_side=plan.stage_side)
        venue.stage_side = plan.stage_side


def check_time_zone(name: str) -> None:
    """An IANA zone name, or InvalidEvent."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise InvalidEvent(f"{name!r} is not an IANA time zone (e.g. Europe/Berlin).") from error
