"""Best available (issue 29): "4 of the best seats in category A", held for the customer.

The seats are one block side by side in one row, no aisle between (bookings.adjacency),
with at least `accessible` wheelchair places among them ("2 wheelchair places and 2
companion seats" is quantity 4, accessible 2).  Blocks are ranked by the sum of their seats'
quality (the venue's score, staff-set or the distance from the stage centre; a cabin's row),
and a block that would leave a single seat alone is taken only when no other block fits
anywhere (and freely where staff switched the single-seat rule off for the sale).

One transaction, in the one lock order (docs/architecture.md): the hold cap's advisory lock;
then one row at a time, the **whole row** locked (whether a block strands a seat depends on
its neighbours, which a concurrent hold may be taking), the block chosen again from the
locked rows; then the booking and, last, the fare-inventory reserve.  The rows to try come
from a plain read; a row that has changed meanwhile is let go (its savepoint rolled back,
which releases its row locks) before the next one is locked, so a transaction never holds
two rows' locks out of order.  Only AVAILABLE seats are picked: a lapsed hold's seats come
back through the expiry sweep (and the waitlist first).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext

from bookings import adjacency, availability, catalogue
from bookings.customer_holds import check_fare_class
from bookings.errors import NoAdjacentSeats, SoldOut
from bookings.holding import (
    check_hold_cap,
    check_party_size,
    create_held_booking,
    hold_ttl,
    open_inventory,
    reserve_units,
)
from bookings.live import announce_seats_on_commit
from bookings.models import Booking, Seat, SeatStatus
from bookings.passengers import clean_passenger_names
from bookings.seat_checks import is_free
from kernel.errors import InvalidRequest
from kernel.locking import lock_errors_as_too_busy, lock_seats
from kernel.metrics import counts_holds

SEAT_FIELDS = ("id", "sale_id", "seat_no", "fare_class", "status", "held_until")
NEIGHBOUR_FIELDS = ("row_key", "place", "quality", "accessible", "surcharge")


@counts_holds
@lock_errors_as_too_busy
def hold_best_available(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    quantity: int,
    accessible: int = 0,
    passenger_names: Sequence[str] | None = None,
) -> Booking:
    """Hold the best block of `quantity` seats of `fare_class` for `customer`, or nothing."""
    check_party_size(quantity, field="quantity")
    if not 0 <= accessible <= quantity:
        raise InvalidRequest(
            gettext("Wheelchair places are between 0 and the number of seats."),
            field="accessible",
        )
    names = clean_passenger_names(passenger_names, quantity)
    check_fare_class(fare_class)
    now = timezone.now()
    with (
        availability.hold_admission(sale_id=sale_id, fare_class=fare_class, units=quantity),
        transaction.atomic(),
    ):
        check_hold_cap(customer=customer, sale_id=sale_id, units=quantity, now=now)
        inventory = open_inventory(sale_id=sale_id, fare_class=fare_class, now=now)
        seats = pick_block(
            sale_id=sale_id,
            fare_class=fare_class,
            quantity=quantity,
            accessible=accessible,
            rule=inventory.sale.keeps_no_single_seats,
            now=now,
        )
        booking = create_held_booking(
            customer_id=customer.pk,
            sale_id=sale_id,
            fare_class=fare_class,
            units=quantity,
            seats=seats,
            names=names,
            amount=inventory.price * quantity + sum((s.surcharge for s in seats), Decimal(0)),
            currency=inventory.currency,
            expires_at=now + hold_ttl(),
            now=now,
        )
        if not reserve_units(sale_id=sale_id, fare_class=fare_class, units=quantity):
            raise SoldOut(fare_class, texts=catalogue.for_sale(inventory.sale).texts)
        announce_seats_on_commit(
            sale_id=sale_id, seats=sorted(s.seat_no for s in seats), status=SeatStatus.HELD
        )
    booking.sale = inventory.sale
    return booking


def pick_block(
    *, sale_id: int, fare_class: str, quantity: int, accessible: int, rule: bool, now: datetime
) -> list[Seat]:
    """The chosen block, its row locked; NoAdjacentSeats if none fits.  With the single-seat
    rule, a first pass takes only blocks that strand nobody; the second (nothing else fits)
    any block."""
    for may_strand in (False, True) if rule else (True,):
        for row_key, _block in ranked_blocks(
            sale_id=sale_id,
            fare_class=fare_class,
            quantity=quantity,
            accessible=accessible,
            may_strand=may_strand,
            now=now,
        ):
            block = _lock_row_and_choose(
                sale_id=sale_id,
                row_key=row_key,
                fare_class=fare_class,
                quantity=quantity,
                accessible=accessible,
                may_strand=may_strand,
                now=now,
            )
            if block is not None:
                return block
    raise NoAdjacentSeats(quantity, accessible=accessible)


def ranked_blocks(
    *,
    sale_id: int,
    fare_class: str,
    quantity: int,
    accessible: int = 0,
    may_strand: bool,
    now: datetime,
) -> Iterator[tuple[str, list[Seat]]]:
    """(row key, its best block) for every row that has one, from a plain read, best first:
    the blocks that strand nobody, then the others, each by quality (then place, row key).
    Also what a refused pick is offered instead (seat_checks.check_leaves_no_single_seat).

    Lazily, because the first block usually suffices and a sale has many rows: the rows are
    read a few at a time, in the order of a floor under their best block's quality (the sum
    of their `quantity` best free seats of the class, from SQL, which also leaves out the
    rows without enough of them), and a block is yielded once no row still unread could rank
    before it.  The order is exactly that of ranking every row at once."""
    floors = _row_floors(sale_id=sale_id, fare_class=fare_class, quantity=quantity)
    waiting: list[tuple[bool, float, int, str, list[Seat]]] = []  # a heap, best first
    read = 0
    while read < len(floors) or waiting:
        # A stranding block (sorted after every block that strands nobody) waits for the end.
        floor = floors[read][0] - FLOOR_SLACK if read < len(floors) else math.inf
        while waiting and (read == len(floors) or (not waiting[0][0] and waiting[0][1] < floor)):
            *_key, row_key, block = heapq.heappop(waiting)
            yield row_key, block
        if read == len(floors):
            continue
        batch = [row_key for _floor, row_key in floors[read : read + ROWS_PER_READ]]
        read += len(batch)
        seats = Seat.objects.filter(sale_id=sale_id, row_key__in=batch)
        for row_key, row in adjacency.by_row(seats.only(*SEAT_FIELDS, *NEIGHBOUR_FIELDS)).items():
            found = _choose(row, fare_class, quantity, accessible, may_strand=may_strand, now=now)
            if found is not None:
                block, strands = found
                quality = sum(s.quality for s in block)
                heapq.heappush(waiting, (strands, quality, block[0].place, row_key, block))


# Rows read per query while ranking (the best row is usually among the first few).
ROWS_PER_READ = 4
# PostgreSQL and Python add the same qualities in different orders: a block is yielded only
# when it beats the next floor by more than their rounding, or ties are read first.
FLOOR_SLACK = 1e-9


def _row_floors(*, sale_id: int, fare_class: str, quantity: int) -> list[tuple[float, str]]:
    """(floor, row key) of every row with at least `quantity` AVAILABLE seats of the class,
    lowest first: the floor is the sum of their `quantity` best qualities, which no block of
    the row can beat (a block is `quantity` of those seats).  One query, done in PostgreSQL."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT sum(quality), row_key FROM (
                SELECT row_key, quality,
                       row_number() OVER (PARTITION BY row_key ORDER BY quality) AS rank
                FROM {Seat._meta.db_table}
                WHERE sale_id = %s AND fare_class = %s AND status = %s AND row_key <> ''
                  AND place IS NOT NULL
            ) AS free
            WHERE rank <= %s
            GROUP BY row_key
            HAVING count(*) = %s
            ORDER BY 1, 2
            """,
            [sale_id, fare_class, SeatStatus.AVAILABLE, quantity, quantity],
        )
        return cursor.fetchall()


def _choose(
    row: Sequence[Seat],
    fare_class: str,
    quantity: int,
    accessible: int,
    *,
    may_strand: bool,
    now: datetime,
) -> tuple[list[Seat], bool] | None:
    return adjacency.best_block(
        row,
        n=quantity,
        free={s.seat_no for s in row if is_free(s, now)},
        pickable=lambda s: s.status == SeatStatus.AVAILABLE and s.fare_class == fare_class,
        accessible=accessible,
        may_strand=may_strand,
    )


class _RowChanged(Exception):
    pass


def _lock_row_and_choose(
    *,
    sale_id: int,
    row_key: str,
    fare_class: str,
    quantity: int,
    accessible: int,
    may_strand: bool,
    now: datetime,
) -> list[Seat] | None:
    """The row's every seat locked in the lock order (docs/architecture.md) and the block
    chosen again from them; None (and the row's locks released) if it no longer has one."""
    try:
        with transaction.atomic():  # a savepoint: rolling it back releases the row's locks
            row = list(lock_seats(Seat.objects.filter(sale_id=sale_id, row_key=row_key)))
            found = _choose(
                adjacency.by_row(row).get(row_key, []),
                fare_class,
                quantity,
                accessible,
                may_strand=may_strand,
                now=now,
            )
            if found is None:
                raise _RowChanged()
            return found[0]
    except _RowChanged:
        return None
