"""Writes on events: creating an event with its price categories, assigning categories to
seats, putting it on sale, cancelling it.  A venue and its plan are written by
`events.venues`.

Each service is one transaction that locks the row it changes (the event) first, so two staff
members saving at once serialise instead of interleaving.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from bookings import inventory as engine_inventory
from bookings.errors import HoldExpired, InvalidBookingState
from bookings.inventory import open_sale
from bookings.models import LIVE_STATUSES, Booking, SaleKind
from bookings.waitlist import close_departed_waitlists
from events import lifecycle
from events.errors import (
    EventNotEditable,
    EventNotFound,
    InvalidCategoryAssignment,
    InvalidEvent,
)
from events.models import (
    DEFAULT_EVENT_DURATION,
    CategoryAssignment,
    Event,
    EventCategory,
    EventStatus,
    PriceCategory,
    Section,
    SectionKind,
    Venue,
    VenueSeat,
)
from events.sale_snapshot import sale_plan
from events.selectors import unpriced_places
from payments.cancellation import cancel_booking
from payments.currency import NotChargeable, check_chargeable
from payments.errors import BookingAlreadyCancelled


@dataclass(frozen=True)
class PriceCategorySpec:
    code: str
    name: str
    price: Decimal
    currency: str = "EUR"
    colour: str = "#2563eb"


@dataclass(frozen=True)
class AssignmentSpec:
    """Category `category` for section `section` (by name): rows first_row..last_row by the
    section's front-to-back order, or the whole section when both are empty."""

    category: str
    section: str
    first_row: str = ""
    last_row: str = ""


def create_event(
    *,
    venue: Venue,
    name: str,
    category: str,
    starts_at: datetime,
    on_sale_at: datetime,
    price_categories: Sequence[PriceCategorySpec],
    description: str = "",
    duration: timedelta = DEFAULT_EVENT_DURATION,
) -> Event:
    """A DRAFT event at `venue` with its price categories.  Seats get their category with
    `assign_categories`; `put_event_on_sale` publishes it."""
    now = timezone.now()
    check_new_event(name=name, category=category, starts_at=starts_at, on_sale_at=on_sale_at)
    if duration <= timedelta(0):
        raise InvalidEvent("An event lasts longer than no time at all.")
    check_price_categories(price_categories)
    try:
        with transaction.atomic():
            locked = Venue.objects.select_for_update().get(pk=venue.pk)
            if not Section.objects.filter(venue=locked).exists():
                raise InvalidEvent(f"{locked} has no seating plan yet; build it first.")
            event = Event.objects.create(
                name=name.strip(),
                venue=locked,
                category=category,
                starts_at=starts_at,
                on_sale_at=on_sale_at,
                duration=duration,
                description=description.strip(),
                status_changed_at=now,
            )
            PriceCategory.objects.bulk_create(
                [
                    PriceCategory(
                        event=event,
                        code=spec.code,
                        name=spec.name.strip(),
                        price=spec.price,
                        currency=spec.currency,
                        colour=spec.colour,
                    )
                    for spec in price_categories
                ]
            )
    except IntegrityError as error:
        raise InvalidEvent(
            f"{venue} already has an event {name!r} starting at {starts_at:%Y-%m-%d %H:%M}."
        ) from error
    return event


def check_new_event(*, name: str, category: str, starts_at: datetime, on_sale_at: datetime) -> None:
    """What `create_event` refuses about the event itself (forms call it too)."""
    if category not in EventCategory.values:
        raise InvalidEvent(f"Unknown event category {category!r}.")
    if not name.strip():
        raise InvalidEvent("An event needs a name.")
    if timezone.is_naive(starts_at) or timezone.is_naive(on_sale_at):
        raise InvalidEvent("Give the start and on-sale times with their time zone.")
    if starts_at <= timezone.now():
        raise InvalidEvent("The event must start in the future.")
    if on_sale_at >= starts_at:
        raise InvalidEvent("Tickets must go on sale before the event starts.")


def check_price_categories(specs: Sequence[PriceCategorySpec]) -> None:
    """What `create_event` refuses about the price categories (forms call it too)."""
    if not specs:
        raise InvalidEvent("An event needs at least one price category.")
    codes = [s.code for s in specs]
    if len(set(codes)) != len(codes):
        raise InvalidEvent("Each price category needs its own code.")
    for spec in specs:
        if not (spec.code[:1].isalpha() and spec.code.isalnum() and spec.code.isupper()):
            raise InvalidEvent(f"Price category code {spec.code!r}: capital letters and digits.")
        if len(spec.code) > 10 or not spec.name.strip():
            raise InvalidEvent(f"Price category {spec.code}: a code of 1-10 and a name.")
        if spec.price < 0:
            raise InvalidEvent(f"Price category {spec.code}: the price cannot be negative.")
        try:
            check_chargeable(spec.price, spec.currency)
        except NotChargeable as exc:
            raise InvalidEvent(f"Price category {spec.code}: {exc}") from None


def assign_categories(*, event_id: int, assignments: Sequence[AssignmentSpec]) -> int:
    """Replace the event's category assignments; returns how many seats and standing areas
    they price.  Only while the event is a DRAFT (once on sale, its seats are being sold).
    Every rule must name a category of this event, a section of its venue and rows of that
    section; no seat or standing area may end up in two categories."""
    with transaction.atomic():
        event = _lock_event(event_id)
        rules, priced = _checked_assignments(event, assignments)
        CategoryAssignment.objects.filter(category__event=event).delete()
        CategoryAssignment.objects.bulk_create(rules)
        return priced


def check_assignments(*, event: Event, assignments: Sequence[AssignmentSpec]) -> int:
    """What `assign_categories` would refuse, without changing anything (for forms)."""
    return _checked_assignments(event, assignments)[1]


def _checked_assignments(
    event: Event, assignments: Sequence[AssignmentSpec]
) -> tuple[list[CategoryAssignment], int]:
    if event.status != EventStatus.DRAFT:
        raise EventNotEditable(
            f"{event.name} is {event.get_status_display().lower()}; its price categories "
            "can only be assigned while it is a draft."
        )
    categories = {c.code: c for c in PriceCategory.objects.filter(event=event)}
    sections = {s.name.lower(): s for s in Section.objects.filter(venue_id=event.venue_id)}
    rules, problems = [], []
    priced: dict[object, int] = {}
    for number, spec in enumerate(assignments, start=1):
        try:
            rule, places = _resolve(spec, categories, sections)
        except InvalidCategoryAssignment as error:
            problems.append(f"Rule {number}: {error.detail}")
            continue
        overlapped = next((priced[p] for p in places if p in priced), None)
        if overlapped is not None:
            problems.append(
                f"Rule {number} ({spec.category}, {spec.section}) overlaps rule {overlapped}: "
                "one category per seat."
            )
            continue
        priced.update((place, number) for place in places)
        rules.append(rule)
    if problems:
        raise InvalidCategoryAssignment(" ".join(problems))
    return rules, len(priced)


def _resolve(
    spec: AssignmentSpec, categories: dict[str, PriceCategory], sections: dict[str, Section]
) -> tuple[CategoryAssignment, list]:
    category = categories.get(spec.category)
    if category is None:
        raise InvalidCategoryAssignment(f"the event has no price category {spec.category!r}.")
    section = sections.get(spec.section.strip().lower())
    if section is None:
        raise InvalidCategoryAssignment(f"the venue has no section {spec.section!r}.")
    first, last = spec.first_row.strip().upper(), spec.last_row.strip().upper()
    rule = CategoryAssignment(category=category, section=section, first_row=first, last_row=last)
    if section.kind == SectionKind.STANDING:
        if first or last:
            raise InvalidCategoryAssignment(f"{section.name} is standing: it has no rows.")
        return rule, [("standing", section.pk)]
    seats = VenueSeat.objects.filter(section=section)
    if first or last:
        rows = dict(seats.values_list("row", "row_index").distinct())
        missing = [r for r in (first, last) if r not in rows]
        if not first or not last or missing:
            raise InvalidCategoryAssignment(
                f"{section.name} has no row {(missing or [''])[0]!r}; give a first and a last "
                "row of the section."
            )
        if rows[first] > rows[last]:
            raise InvalidCategoryAssignment(
                f"{section.name}: row {first} is behind row {last}; write the front row first."
            )
        seats = seats.filter(row_index__gte=rows[first], row_index__lte=rows[last])
    return rule, list(seats.values_list("pk", flat=True))


def put_event_on_sale(*, event_id: int) -> Event:
    """Publish a DRAFT event: it shows in the search, and its sale opens at `on_sale_at`.
    Every seat and standing area of the venue must have a price category first.

    This is when the engine's sale is opened: the venue plan and the prices are final now
    (categories can no longer be assigned), and they are copied into the sale's seats and
    inventory classes (`events.sale_snapshot`) in the same transaction."""
    with transaction.atomic():
        event = _lock_event(event_id)
        if event.status != EventStatus.DRAFT:
            raise EventNotEditable(f"{event.name} is {event.get_status_display().lower()}.")
        if event.starts_at <= timezone.now():
            raise EventNotEditable(f"{event.name} has already started.")
        unpriced = unpriced_places(event=event)
        if unpriced:
            raise InvalidCategoryAssignment(
                f"{event.name} cannot go on sale: no price category for {', '.join(unpriced[:5])}"
                + (f" and {len(unpriced) - 5} more." if len(unpriced) > 5 else ".")
            )
        _set_status(event, EventStatus.ON_SALE)
        _open_sale(event)
        return event


def open_missing_sale(*, event_id: int) -> bool:
    """Open the sale of an event published before events were sold (it has none yet);
    False when it already has one or is not on sale.  For data loaded by an older version
    (`load_demo` calls it)."""
    with transaction.atomic():
        event = _lock_event(event_id)
        if event.sale_id is not None or event.status != EventStatus.ON_SALE:
            return False
        _open_sale(event)
        return True


def _open_sale(event: Event) -> None:
    """The caller holds the event's row lock."""
    plan = sale_plan(event=event)
    sale = open_sale(
        kind=SaleKind.EVENT, classes=plan.classes, seats=plan.seats, keeps_no_single_seats=True
    )
    Event.objects.filter(pk=event.pk, sale__isnull=True).update(sale=sale)
    event.sale = sale


def set_single_seat_rule(*, event_id: int, keep: bool) -> bool:
    """Keep (or switch off) the rule that no hold leaves a single seat alone, for an event on
    sale (bookings.inventory.set_single_seat_rule).  Returns whether it changed."""
    sale_id = Event.objects.filter(pk=event_id).values_list("sale_id", flat=True).first()
    if sale_id is None:
        raise InvalidEvent(gettext("The event is not on sale yet: nothing to change."))
    return engine_inventory.set_single_seat_rule(sale_id=sale_id, keep=keep)


@dataclass(frozen=True)
class EventCancellation:
    changed: bool  # False: it was already cancelled (this call only finished the work)
    bookings_cancelled: int
    refunds: int
    waitlist_closed: int

    def __bool__(self) -> bool:
        return self.changed


def cancel_event(
    *, event_id: int, cancelled_by: AbstractBaseUser | None = None
) -> EventCancellation:
    """Cancel a draft or published event and give everyone their money back.  An event that
    has ended cannot be called off, and one that has begun only by staff who may grant
    goodwill refunds (`events.lifecycle.check_may_call_off`); its refunds are then recorded
    as goodwill refunds approved by them.

    1. The event becomes CANCELLED (its own transaction): from then on its sale is closed
       (`events.rules.is_open`), so no hold, payment or waitlist place can start, and a
       payment arriving later is refunded in full (payments' late-payment rule).
    2. Every live booking is cancelled through `payments.cancellation.cancel_booking`, one
       booking per transaction in the one lock order (docs/architecture.md, "Lock order"):
       HELD ones are released, CONFIRMED ones refunded in full (the refund policy gives 100%
       for a called-off sale), the refund sent after commit; the e-mails go through the
       outbox (`booking.cancelled`, `refund.issued`).  A booking the customer cancels or
       lets expire meanwhile is simply skipped.
    3. The sale's waitlist is closed.

    Idempotent: calling it again (e.g. after a crash between bookings) finishes what is
    left and reports `changed=False`; it is falsy then, as the old boolean answer was.
    `cancelled_by` (staff) is recorded on the refunds as who approved them."""
    with transaction.atomic():
        event = _lock_event(event_id)
        changed = event.status != EventStatus.CANCELLED
        # Asked again when finishing an interrupted cancellation: its refunds are as late.
        goodwill = lifecycle.check_may_call_off(event, by=cancelled_by, now=timezone.now())
        if changed:
            _set_status(event, EventStatus.CANCELLED)
    cancelled = refunds = 0
    if event.sale_id is not None:
        live = Booking.objects.filter(sale_id=event.sale_id, status__in=LIVE_STATUSES)
        for booking_id in live.order_by("id").values_list("pk", flat=True):
            try:
                result = cancel_booking(
                    customer=cancelled_by, booking_id=booking_id, by_staff=True, goodwill=goodwill
                )
            except (BookingAlreadyCancelled, HoldExpired, InvalidBookingState):
                continue  # closed meanwhile by its customer or the sweep
            cancelled += 1
            refunds += result.refund is not None
    closed = close_departed_waitlists() if event.sale_id is not None else 0
    return EventCancellation(changed, cancelled, refunds, closed)


def _lock_event(event_id: int) -> Event:
    event = Event.objects.select_for_update().filter(pk=event_id).first()
    if event is None:
        raise EventNotFound(gettext("There is no event %(id)s.") % {"id": event_id})
    return event


def _set_status(event: Event, status: str) -> None:
    now = timezone.now()
    # The row is locked by the caller; the guarded update states which transition this is.
    changed = Event.objects.filter(pk=event.pk, status=event.status).update(
        status=status, status_changed_at=now
    )
    if changed != 1:  # cannot happen while the caller holds the row lock; never write blind
        raise EventNotEditable(f"{event.name} changed meanwhile; reload and try again.")
    event.status, event.status_changed_at = status, now
