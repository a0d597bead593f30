"""Changing the plan of a venue that has events (the admin's seat-map editor,
`events.venues.save_drawn_plan`), safely: pretix's rule that a seat held or sold is never
taken out of a plan on sale.

What may change, and what may not:

* Sections are matched by name.  A section a category of any event prices (a
  `CategoryAssignment`) is never removed; renaming it is removing it.  New sections come after
  the existing ones, and existing ones keep their place, so the engine's section codes (its
  seat numbers "2-F-12", `events.sale_snapshot`) stay what they are.
* Seats are matched by section, row label and number.  For each event ON SALE, the engine's
  copy follows: a seat drawn anew joins the sale in the category the event's rules give it
  (refused where no category prices it); a seat moved, re-flagged or re-scored (an aisle, a
  curve, accessible, restricted view, quality) is updated; a seat left out of the drawing, or
  renumbered, is taken out of sale (`inventory.block_seat`) only if it is AVAILABLE.  HELD or
  SOLD: the whole save is refused, with the seat named.  A seat already in a category keeps it.
* Cancelled and finished events keep the snapshot they sold (nothing of theirs changes).
* Customers' seat maps follow on commit: every sale of the venue's events has its live
  seat-map version bumped (`bookings.live.announce_plan_on_commit`), so the cached seat map
  (keyed by that version, its ETag carrying it) is read anew and open pages redraw.  Seat
  statuses alone would miss a seat re-flagged, re-scored or moved: only a plan message says so.

The seats to take out are locked in the one lock order (docs/architecture.md,
`kernel.locking.lock_seats`) before
their state is read, so a hold racing the save either commits first (and the save, reading
HELD under the lock, refuses) or waits for the save and finds the seat blocked.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils.translation import gettext

from bookings import inventory, live
from bookings.models import Inventory, Seat, SeatStatus
from events.errors import InvalidVenuePlan, VenuePlanSeatsInUse
from events.models import (
    CategoryAssignment,
    Event,
    EventStatus,
    Section,
    SectionKind,
    Venue,
    VenueSeat,
)
from events.plan_parsing import SeatSpec, VenuePlan
from events.sale_snapshot import sale_plan
from events.selectors import unpriced_places
from kernel.locking import lock_seats

_SEAT_FIELDS = ("row", "place", "accessible", "restricted_view", "quality")


def change_plan_in_use(*, venue: Venue, plan: VenuePlan, events: list[Event]) -> None:
    """Write `plan`'s seated sections over the venue's (standing areas stay) and bring the
    sales of its events on sale along, all or nothing.  The caller holds the venue's and the
    events' row locks, inside its transaction."""
    _write_sections(venue=venue, plan=plan)
    on_sale = [e for e in events if e.status == EventStatus.ON_SALE and e.sale_id]
    changes = [_sale_changes(event) for event in on_sale]
    problems = [p for change in changes for p in change.problems]
    in_use = [seat_no for change in changes for seat_no in change.in_use]
    if in_use:
        raise VenuePlanSeatsInUse(problems, seats=in_use)
    if problems:
        raise InvalidVenuePlan(problems)
    for change in changes:
        change.apply()
    announce_plan_change(events=events)


def announce_plan_change(*, events: list[Event]) -> None:
    """The guard of the docstring's last point (the live test's control replaces it with a
    no-op and finds the stale map)."""
    live.announce_plan_on_commit(sale_ids=[e.sale_id for e in events if e.sale_id])


def _write_sections(*, venue: Venue, plan: VenuePlan) -> None:
    sections = {s.name.lower(): s for s in Section.objects.filter(venue=venue)}
    drawn = {s.name.lower() for s in plan.sections}
    problems = [
        gettext('"%(name)s" is a standing area of this venue.') % {"name": s.name}
        for key, s in sections.items()
        if key in drawn and s.kind == SectionKind.STANDING
    ]
    priced = set(
        CategoryAssignment.objects.filter(section__venue=venue).values_list("section_id", flat=True)
    )
    gone = [s for key, s in sections.items() if key not in drawn and s.kind == SectionKind.SEATED]
    problems += [
        gettext(
            'Section "%(name)s" is priced by the venue\'s events: it cannot be removed or renamed.'
        )
        % {"name": s.name}
        for s in gone
        if s.pk in priced
    ]
    if problems:
        raise InvalidVenuePlan(problems)
    Section.objects.filter(pk__in=[s.pk for s in gone]).delete()
    last = max((s.position for s in sections.values()), default=0)
    for spec in plan.sections:
        section = sections.get(spec.name.lower())
        if section is None:
            last += 1
            section = Section.objects.create(
                venue=venue, name=spec.name, kind=SectionKind.SEATED, position=last
            )
        section.seats.all().delete()  # nothing refers to a venue seat: matched by its name
        write_seats(section=section, seats=spec.seats)


def write_seats(*, section: Section, seats: list[SeatSpec]) -> None:
    """The plan builders' one way of writing a section's seats."""
    VenueSeat.objects.bulk_create(
        [
            VenueSeat(
                section=section,
                row=seat.row,
                row_index=seat.row_index,
                number=seat.number,
                x=seat.x,
                y=seat.y,
                accessible=seat.accessible,
                restricted_view=seat.restricted_view,
                quality=seat.quality,
            )
            for seat in seats
        ],
        batch_size=2000,
    )


def lock_seats_to_take_out(*, sale_id: int, seat_nos: list[str]) -> QuerySet:
    """The engine seats a save takes out of sale or rewrites, locked (the guard of the module's
    docstring; the race test's control replaces it with a read without the lock)."""
    return lock_seats(Seat.objects.filter(sale_id=sale_id, seat_no__in=seat_nos))


class _SaleChanges:
    """What one event's sale must do to follow the new plan, found (and refused) first,
    written by `apply` only when no sale of the venue refused."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self.sale_id = event.sale_id
        self.problems: list[str] = []
        self.added: list = []
        self.updated: list[tuple[int, dict]] = []
        self.taken_out: list[str] = []
        self.in_use: list[str] = []  # held or sold seats the plan would take out
        self._find()

    def _find(self) -> None:
        event, name = self.event, self.event.name
        unpriced = unpriced_places(event=event)
        if unpriced:
            self.problems.append(
                gettext(
                    "%(event)s is on sale and no price category sells %(places)s: draw new "
                    "seats only where its categories reach."
                )
                % {"event": name, "places": ", ".join(unpriced[:5])}
            )
            return
        expected = {s.seat_no: s for s in sale_plan(event=event).seats}
        engine = {s.seat_no: s for s in Seat.objects.filter(sale_id=self.sale_id)}
        classes = set(
            Inventory.objects.filter(sale_id=self.sale_id).values_list("fare_class", flat=True)
        )
        for seat_no, spec in expected.items():
            seat = engine.get(seat_no)
            if seat is None:
                if spec.fare_class not in classes:
                    self.problems.append(
                        self._named(spec, gettext("is in a category with no seats on sale"))
                    )
                self.added.append(spec)
            elif seat.fare_class != spec.fare_class:
                self.problems.append(
                    self._named(
                        spec,
                        gettext("would move from category %(old)s to %(new)s")
                        % {"old": seat.fare_class, "new": spec.fare_class},
                    )
                )
            else:
                fields = {f: getattr(spec, f) for f in _SEAT_FIELDS}
                if any(getattr(seat, f) != v for f, v in fields.items()):
                    self.updated.append((seat.pk, fields))
        gone = [no for no in engine if no not in expected]
        seat_no_of = {seat.pk: no for no, seat in engine.items()}
        touched = gone + [seat_no_of[pk] for pk, _ in self.updated]
        # The guard: the seats taken out (and those rewritten) are locked in the one lock
        # order (docs/architecture.md) before their state is read.
        for seat in lock_seats_to_take_out(sale_id=self.sale_id, seat_nos=touched):
            if seat.seat_no not in gone:
                continue
            if seat.status in (SeatStatus.HELD, SeatStatus.SOLD):
                state = gettext("sold") if seat.status == SeatStatus.SOLD else gettext("held")
                self.in_use.append(seat.seat_no)
                self.problems.append(
                    gettext(
                        "%(section)s row %(row)s seat %(number)s is %(state)s for %(event)s: "
                        "a seat held or sold stays in the plan (not removed, not renumbered)."
                    )
                    % {
                        "section": seat.section,
                        "row": seat.row_label,
                        "number": seat.number,
                        "state": state,
                        "event": name,
                    }
                )
            elif seat.status == SeatStatus.AVAILABLE:
                self.taken_out.append(seat.seat_no)

    def _named(self, spec, what: str) -> str:
        return gettext("%(section)s row %(row)s seat %(number)s %(what)s in %(event)s.") % {
            "section": spec.section,
            "row": spec.row_label,
            "number": spec.number,
            "what": what,
            "event": self.event.name,
        }

    def apply(self) -> None:
        for seat_no in self.taken_out:
            # Read AVAILABLE under its lock, so it still is: the block cannot fail here.
            inventory.block_seat(sale_id=self.sale_id, seat_no=seat_no)
        for pk, fields in self.updated:
            Seat.objects.filter(pk=pk).update(**fields)
        for spec in self.added:
            # Written blocked, then returned to sale the one way a seat is: its class gains
            # the unit, the counters and the seat maps hear of it, the waitlist is offered it.
            Seat.objects.create(
                sale_id=self.sale_id,
                seat_no=spec.seat_no,
                status=SeatStatus.BLOCKED,
                letter=spec.letter,
                fare_class=spec.fare_class,
                section=spec.section,
                row_label=spec.row_label,
                number=spec.number,
                row_key=spec.row_key,
                **{f: getattr(spec, f) for f in _SEAT_FIELDS},
            )
            inventory.unblock_seat(sale_id=self.sale_id, seat_no=spec.seat_no)


def _sale_changes(event: Event) -> _SaleChanges:
    return _SaleChanges(event)
