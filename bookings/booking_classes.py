"""Booking classes nested in a fare class (docs/fare-classes.md): the counters every hold,
sale and release of a booking class moves, the staff operations on the classes, and the read
of which classes are still open.

Staff create and change classes through `bookings.inventory.set_booking_class`.

Each `BookingClass` row counts its own units and those of every lower rank, so one hold of
rank r moves every row of rank >= r, in one statement.  Lock order (docs/architecture.md):
booking-class rows are only ever written by a transaction that already holds their fare
class's `Inventory` row lock, and then in rank order, so they add no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import connection
from django.utils.translation import gettext

from bookings.booking_class_models import BookingClass
from bookings.errors import BookingClassNotFound
from bookings.models import Inventory

_TABLE = BookingClass._meta.db_table
_RANK_OF = (
    f'(SELECT "rank" FROM "{_TABLE}" WHERE "sale_id" = %s AND "fare_class" = %s AND "code" = %s)'
)
# THE nested reserve.  PostgreSQL: lock the chain (this class and every dearer one) in rank
# order, read the smallest room among the locked (latest) rows, and add the units to all of
# them only if every one has room: all rows or none, in one statement.  The CHECK
# `booking_class_within_nested_limit` refuses whatever a bug would let through.
_RESERVE_SQL_POSTGRESQL = (
    f'WITH "chain" AS MATERIALIZED (SELECT "id", "auth_limit" - "sold" - "held" AS "room" '
    f'FROM "{_TABLE}" WHERE "sale_id" = %s AND "fare_class" = %s AND "rank" >= {_RANK_OF} '
    'ORDER BY "rank" FOR UPDATE) '
    f'UPDATE "{_TABLE}" SET "held" = "held" + %s FROM "chain" '
    f'WHERE "{_TABLE}"."id" = "chain"."id" AND (SELECT MIN("room") FROM "chain") >= %s'
)
# SQLite runs one writer at a time (IMMEDIATE transactions): the same rule without row locks.
_RESERVE_SQL_SQLITE = (
    f'UPDATE "{_TABLE}" SET "held" = "held" + %s '
    f'WHERE "sale_id" = %s AND "fare_class" = %s AND "rank" >= {_RANK_OF} '
    f'AND (SELECT MIN("auth_limit" - "sold" - "held") FROM "{_TABLE}" WHERE "sale_id" = %s '
    f'AND "fare_class" = %s AND "rank" >= {_RANK_OF}) >= %s'
)
_MOVE_SQL = (
    f'UPDATE "{_TABLE}" SET "held" = "held" + %s, "sold" = "sold" + %s '
    f'WHERE "sale_id" = %s AND "fare_class" = %s AND "rank" >= {_RANK_OF}'
)


def reserve_class_units(*, sale_id: int, fare_class: str, booking_class: str, units: int) -> bool:
    """Take `units` from `booking_class` and every dearer class of `fare_class`; True if all
    had room.  Called by `holding.reserve_units` right after the fare class's own reserve,
    under its row lock; a False makes the hold raise and roll back (both reserves)."""
    rank = [sale_id, fare_class, booking_class]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(_RESERVE_SQL_POSTGRESQL, [sale_id, fare_class, *rank, units, units])
        else:
            cursor.execute(
                _RESERVE_SQL_SQLITE,
                [units, sale_id, fare_class, *rank, sale_id, fare_class, *rank, units],
            )
        return cursor.rowcount > 0


def move_class_counters(
    *, sale_id: int, fare_class: str, booking_class: str, held: int = 0, sold: int = 0
) -> None:
    """Move the counters of `booking_class` and every dearer class by `held` / `sold` (a
    sale: -n, +n; a release: -n, 0 or 0, -n).  The caller has just moved, and so locked, the
    fare class's own row."""
    if not booking_class:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            _MOVE_SQL, [held, sold, sale_id, fare_class, sale_id, fare_class, booking_class]
        )


@dataclass(frozen=True)
class OpenClass:
    """A booking class as a customer may choose it: code ("" is the fare class's own)."""

    code: str
    name: str
    price: Decimal
    left: int  # units this class can still sell: the smallest room along its chain


def fare_choices(*, sale_id: int, fare_class: str) -> list[OpenClass]:
    """Every class a hold on `fare_class` may name, cheapest (lowest rank) first, the fare
    class's own last, each with what it can still sell (0: closed)."""
    inventory = Inventory.objects.filter(sale_id=sale_id, fare_class=fare_class).first()
    if inventory is None:
        return []
    return choices_of(
        inventory, list(BookingClass.objects.filter(sale_id=sale_id, fare_class=fare_class))
    )


def choices_of(inventory: Inventory, classes: list[BookingClass]) -> list[OpenClass]:
    """`fare_choices` from rows already read (search reads many fare classes at once)."""
    room = inventory.available
    choices = [OpenClass(code="", name="", price=inventory.price, left=room)]
    for bc in sorted(classes, key=lambda c: -c.rank):  # dearest first: room only shrinks
        room = min(room, bc.left)
        choices.append(OpenClass(code=bc.code, name=bc.name, price=bc.price, left=room))
    return choices[::-1]


def open_class_counters(*, open_q) -> list[tuple[int, str, int]]:
    """(sale, counter name "ECONOMY/LAUNCH", units left) of every booking class of the sales
    `open_q` selects: what beat reseeds the hold filters' class counters with."""
    classes: dict[tuple[int, str], list[BookingClass]] = {}
    for bc in BookingClass.objects.filter(open_q):
        classes.setdefault((bc.sale_id, bc.fare_class), []).append(bc)
    rows = []
    for inventory in Inventory.objects.filter(open_q, sale_id__in={k[0] for k in classes}):
        for choice in choices_of(
            inventory, classes.get((inventory.sale_id, inventory.fare_class), [])
        ):
            if choice.code:
                rows.append(
                    (inventory.sale_id, f"{inventory.fare_class}/{choice.code}", choice.left)
                )
    return rows


def cheapest_open(choices: list[OpenClass]) -> OpenClass | None:
    """The cheapest class with a unit left (None: the fare class is sold out)."""
    return next((c for c in choices if c.left > 0), None)


def price_of(*, sale_id: int, fare_class: str, booking_class: str) -> Decimal:
    """The booking class's price; BookingClassNotFound if the fare class has no such class."""
    price = (
        BookingClass.objects.filter(sale_id=sale_id, fare_class=fare_class, code=booking_class)
        .values_list("price", flat=True)
        .first()
    )
    if price is None:
        raise BookingClassNotFound(
            gettext("%(class)s has no booking class %(code)s.")
            % {"class": fare_class, "code": booking_class},
            field="bookingClass",
        )
    return price
