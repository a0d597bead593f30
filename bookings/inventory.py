"""A sale's inventory: opening a sale with its classes and seats (what a catalogue calls when
it creates a flight or an event), and staff operations on it (class limits, blocking and
unblocking seats).  Units that come free go to the waitlist inside the same transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.db.models import F, Value
from django.utils import timezone
from django.utils.translation import gettext

from bookings import availability, catalogue, waitlist
from bookings.live import announce_seats_on_commit
from bookings.models import BookingClass, Inventory, Sale, SaleKind, Seat, SeatStatus
from kernel.errors import InvalidRequest


@dataclass(frozen=True)
class ClassSpec:
    """One inventory class of a new sale (a fare class, a price category, a standing area)."""

    code: str
    capacity: int
    price: Decimal
    currency: str = "EUR"
    overbook_limit: int = 0


@dataclass(frozen=True)
class SeatSpec:
    seat_no: str
    row: int
    letter: str
    fare_class: str
    section: str = ""
    row_label: str = ""
    number: int | None = None
    surcharge: Decimal = Decimal("0.00")
    accessible: bool = False
    restricted_view: bool = False
    # Neighbours and rank (bookings.adjacency); blank/None: a seat with no known neighbours.
    row_key: str = ""
    place: int | None = None
    quality: float = 0.0


def open_sale(
    *,
    kind: SaleKind,
    classes: Sequence[ClassSpec],
    seats: Sequence[SeatSpec] = (),
    sale_id: int | None = None,
    keeps_no_single_seats: bool = False,
) -> Sale:
    """Create a sale with its inventory classes and seats; the catalogue item that owns it
    (a Flight, an Event) is created next to it, in the caller's transaction.

    A class's `capacity` counts its units (seats, or places of a standing area); seats must
    belong to a class.  Overbooking only where the catalogue allows it.
    """
    codes = [c.code for c in classes]
    if not codes or len(set(codes)) != len(codes):
        raise InvalidRequest("A sale needs inventory classes with distinct codes.")
    if any(c.capacity < 0 or c.overbook_limit < 0 or c.price < 0 for c in classes):
        raise InvalidRequest("Capacity, overbook limit and price cannot be negative.")
    if any(c.overbook_limit for c in classes) and not catalogue.for_kind(kind).allows_overbooking:
        raise InvalidRequest(f"{SaleKind(kind).label} sales cannot be overbooked.")
    unknown = sorted({s.fare_class for s in seats} - set(codes))
    if unknown:
        raise InvalidRequest(f"Seats of unknown class {', '.join(unknown)}.")
    with transaction.atomic():
        sale = Sale.objects.create(
            pk=sale_id,
            kind=kind,
            created_at=timezone.now(),
            keeps_no_single_seats=keeps_no_single_seats,
        )
        Inventory.objects.bulk_create(
            Inventory(
                sale=sale,
                fare_class=c.code,
                capacity=c.capacity,
                overbook_limit=c.overbook_limit,
                price=c.price,
                currency=c.currency,
            )
            for c in classes
        )
        Seat.objects.bulk_create(
            (
                Seat(
                    sale=sale,
                    seat_no=s.seat_no,
                    row=s.row,
                    letter=s.letter,
                    fare_class=s.fare_class,
                    section=s.section,
                    row_label=s.row_label,
                    number=s.number,
                    surcharge=s.surcharge,
                    accessible=s.accessible,
                    restricted_view=s.restricted_view,
                    row_key=s.row_key,
                    place=s.place,
                    quality=s.quality,
                )
                for s in seats
            ),
            batch_size=2000,
        )
        for c in classes:  # a fresh sale's counters need no query
            availability.seed_counter(
                sale_id=sale.pk, fare_class=c.code, available=c.capacity + c.overbook_limit
            )
    return sale


def set_fare_limits(
    *, inventory_id: int, capacity: int, overbook_limit: int, price: Decimal
) -> Inventory:
    """Staff change of a fare class's limits.  Refuses limits below what is already sold or held.

    Only the editable columns are written, by a conditional UPDATE: `sold` and `held` keep
    moving under concurrent holds and must never be overwritten by a stale admin form.
    """
    if capacity < 0 or overbook_limit < 0 or price < 0:
        raise InvalidRequest("Capacity, overbook limit and price cannot be negative.")
    with transaction.atomic():
        updated = Inventory.objects.filter(
            pk=inventory_id, sold__lte=Value(capacity + overbook_limit) - F("held")
        ).update(capacity=capacity, overbook_limit=overbook_limit, price=price)
        inventory = Inventory.objects.get(pk=inventory_id)
        if not updated:
            raise InvalidRequest(
                f"Capacity + overbook limit ({capacity + overbook_limit}) would be below the "
                f"{inventory.sold} sold and {inventory.held} held units.",
                field="capacity",
            )
        if inventory.available:
            waitlist.offer_freed_units(
                sale_id=inventory.sale_id, fare_class=inventory.fare_class, now=timezone.now()
            )
            inventory.refresh_from_db()
        availability.seed_counter(
            sale_id=inventory.sale_id,
            fare_class=inventory.fare_class,
            available=inventory.available,
        )
        availability.rebuild_class_counters(
            sale_id=inventory.sale_id, fare_class=inventory.fare_class
        )
    return inventory


def block_seat(*, sale_id: int, seat_no: str) -> bool:
    """Take an AVAILABLE seat out of sale (broken, crew rest...).  Returns whether it changed.

    A blocked seat is no longer sellable capacity, so the fare class loses one unit too —
    conditionally, so it can never drop below what is already sold or held.
    """
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=sale_id, seat_no=seat_no, status=SeatStatus.AVAILABLE)
            .first()
        )
        if seat is None:
            return False
        shrunk = Inventory.objects.filter(
            sale_id=sale_id,
            fare_class=seat.fare_class,
            capacity__gte=1,
            sold__lte=F("capacity") - 1 + F("overbook_limit") - F("held"),
        ).update(capacity=F("capacity") - 1)
        if not shrunk:
            raise InvalidRequest(
                f"Seat {seat_no} cannot be blocked: "
                f"every unit of {seat.fare_class} is sold or held."
            )
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.BLOCKED)
        announce_seats_on_commit(sale_id=sale_id, seats=[seat_no], status=SeatStatus.BLOCKED)
    return True


def unblock_seat(*, sale_id: int, seat_no: str) -> bool:
    """Return a BLOCKED seat to sale; its fare class gains the unit back."""
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=sale_id, seat_no=seat_no, status=SeatStatus.BLOCKED)
            .first()
        )
        if seat is None:
            return False
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.AVAILABLE)
        Inventory.objects.filter(sale_id=sale_id, fare_class=seat.fare_class).update(
            capacity=F("capacity") + 1
        )
        availability.give_back(sale_id=sale_id, fare_class=seat.fare_class, units=1)
        # Announced before the waitlist runs: an offer that takes this seat announces HELD
        # after it, and on_commit callbacks run (and get versions) in registration order.
        announce_seats_on_commit(sale_id=sale_id, seats=[seat_no], status=SeatStatus.AVAILABLE)
        waitlist.offer_freed_units(sale_id=sale_id, fare_class=seat.fare_class, now=timezone.now())
    return True


# --- staff ------------------------------------------------------------------------------------


def set_booking_class(
    *,
    sale_id: int,
    fare_class: str,
    code: str,
    name: str,
    rank: int,
    auth_limit: int,
    price: Decimal,
) -> BookingClass:
    """Create a booking class or change its name, limit and price (staff, the admin).

    Under the fare class's row lock (the lock order, docs/architecture.md): the limit may not
    fall below what the class and its lower ones already hold and sold, must lie between the
    lower class's limit and the dearer class's (or the fare class's capacity + overbook), and
    a class's rank is fixed once it exists (its counters count the ranks below it)."""
    code = code.strip().upper()
    if not code or auth_limit < 0 or price < 0 or rank < 1:
        raise InvalidRequest(
            gettext(
                "A booking class needs a code, a rank of 1 or more, "
                "and a non-negative limit and price."
            )
        )
    with transaction.atomic():
        inventory = (
            Inventory.objects.select_for_update()
            .filter(sale_id=sale_id, fare_class=fare_class)
            .first()
        )
        if inventory is None:
            raise InvalidRequest(
                gettext("There is no fare class %(class)s.") % {"class": fare_class}
            )
        others = {
            c.code: c for c in BookingClass.objects.filter(sale_id=sale_id, fare_class=fare_class)
        }
        existing = others.pop(code, None)
        if existing is not None and existing.rank != rank:
            raise InvalidRequest(
                gettext("The rank of an existing booking class cannot change."), field="rank"
            )
        _check_nesting(inventory, list(others.values()), rank=rank, auth_limit=auth_limit)
        taken = (existing.sold + existing.held) if existing else _units_below(others.values(), rank)
        if auth_limit < taken:
            raise InvalidRequest(
                gettext("The limit %(limit)s is below the %(taken)s units already held or sold.")
                % {"limit": auth_limit, "taken": taken},
                field="auth_limit",
            )
        if existing is None:
            below = _units_below_rows(list(others.values()), rank)
            created = BookingClass.objects.create(
                sale_id=sale_id, fare_class=fare_class, code=code, name=name, rank=rank,
                auth_limit=auth_limit, price=price, held=below[0], sold=below[1],
            )  # fmt: skip
            availability.rebuild_class_counters(sale_id=sale_id, fare_class=fare_class)
            return created
        # Only the editable columns: the counters move under live holds.
        BookingClass.objects.filter(pk=existing.pk).update(
            name=name, auth_limit=auth_limit, price=price
        )
        existing.refresh_from_db()
        availability.rebuild_class_counters(sale_id=sale_id, fare_class=fare_class)
        return existing


def _check_nesting(
    inventory: Inventory, others: list[BookingClass], *, rank: int, auth_limit: int
) -> None:
    top = inventory.capacity + inventory.overbook_limit
    lower = [c.auth_limit for c in others if c.rank < rank]
    higher = [c.auth_limit for c in others if c.rank > rank]
    if rank in {c.rank for c in others}:
        raise InvalidRequest(
            gettext("Another booking class has rank %(rank)s.") % {"rank": rank}, field="rank"
        )
    if auth_limit > min([top, *higher]) or auth_limit < max([0, *lower]):
        raise InvalidRequest(
            gettext(
                "A booking class's limit must lie between the lower classes' limits "
                "and the dearer ones' (at most %(top)s)."
            )
            % {"top": min([top, *higher])},
            field="auth_limit",
        )


def _units_below_rows(others: list[BookingClass], rank: int) -> tuple[int, int]:
    """(held, sold) of the classes below `rank`: the nearest lower row counts them all."""
    lower = [c for c in others if c.rank < rank]
    if not lower:
        return 0, 0
    nearest = max(lower, key=lambda c: c.rank)
    return nearest.held, nearest.sold


def _units_below(others, rank: int) -> int:
    held, sold = _units_below_rows(list(others), rank)
    return held + sold


def remove_booking_class(*, booking_class_id: int) -> None:
    """Staff remove a class that counts no units (to close a class that has some, set its
    limit to what it holds and sold): the counters of dearer classes still count its units."""
    with transaction.atomic():
        bc = BookingClass.objects.filter(pk=booking_class_id).first()
        if bc is None:
            return
        Inventory.objects.select_for_update().filter(
            sale_id=bc.sale_id, fare_class=bc.fare_class
        ).first()
        if BookingClass.objects.filter(pk=bc.pk, held=0, sold=0).delete()[0] == 0:
            raise InvalidRequest(
                gettext(
                    "%(code)s still counts held or sold units; set its limit to close it instead."
                )
                % {"code": bc.code}
            )


def set_single_seat_rule(*, sale_id: int, keep: bool) -> bool:
    """Staff keep (or switch off) the single-seat rule of a sale (bookings.adjacency): holds
    may not leave a free seat alone in its row.  Returns whether it changed."""
    with transaction.atomic():
        return bool(
            Sale.objects.filter(pk=sale_id)
            .exclude(keeps_no_single_seats=keep)
            .update(keeps_no_single_seats=keep)
        )
