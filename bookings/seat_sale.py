"""A sale's seats (`lifecycle.sell_held_booking`): every seat of the booking locked in the one
seat order (`kernel.locking.lock_seats`, docs/architecture.md "Lock order") and the HELD ones
SOLD.  On PostgreSQL that is one statement, not a lock read then an UPDATE: one round trip
of every pay request fewer (docs/performance.md, "Issue 26: the pay's publish and waitlist
UPDATE").  The lock read is the ORM's own SQL, as `_LOCKED_SEATS` compiles it, in a CTE;
the UPDATE beside it names the locked rows, so it changes a row only once the CTE has locked
them all, in that order (the sort comes before the lock).  tests/bookings/test_sale_statements.py
holds both forms to the ORM's querysets."""

from __future__ import annotations

from django.conf import settings
from django.db import connections, router

from bookings.models import Booking, Seat, SeatStatus
from kernel.compiled import CompiledRead
from kernel.locking import lock_seats

_SEAT = Seat._meta.db_table

# Without PostgreSQL: the lock read, then the ORM's UPDATE as it writes it.
_LOCKED_SEAT_NOS = CompiledRead(
    Seat,
    lambda booking_id: lock_seats(Seat.objects.filter(booking_id=booking_id)).values_list(
        "seat_no"
    ),
    booking_id=int,
)
_SELL_SEATS_SQL = (
    f'UPDATE "{_SEAT}" SET "status" = %s, "held_until" = NULL '
    f'WHERE ("{_SEAT}"."booking_id" = %s AND "{_SEAT}"."status" = %s)'
)

# On PostgreSQL: both in one statement, the numbers back in the order they were locked in.
_LOCKED_SEATS = CompiledRead(
    Seat,
    lambda booking_id: lock_seats(Seat.objects.filter(booking_id=booking_id)).values_list(
        "id", "sale_id", "seat_no"
    ),
    booking_id=int,
)
_SELL_LOCKED_SEATS_SQL = (
    'WITH "locked" AS ({locked}), "sold" AS ('
    f'UPDATE "{_SEAT}" SET "status" = %s, "held_until" = NULL '
    f'WHERE ("{_SEAT}"."booking_id" = %s AND "{_SEAT}"."status" = %s '
    f'AND "{_SEAT}"."id" IN (SELECT "id" FROM "locked"))) '
    'SELECT "seat_no" FROM "locked" ORDER BY "sale_id", "seat_no"'
)


def sell_seats(booking: Booking) -> list[str]:
    """Lock every seat of `booking` (whose row lock the caller holds) in the one seat order
    and mark the HELD ones SOLD; the numbers of all of them, in that order."""
    alias = router.db_for_write(Seat)
    sold = [SeatStatus.SOLD, booking.pk, SeatStatus.HELD]
    with connections[alias].cursor() as cursor:
        if not settings.USES_POSTGRES:
            seat_nos = [n for (n,) in _LOCKED_SEAT_NOS.rows(using=alias, booking_id=booking.pk)]
            cursor.execute(_SELL_SEATS_SQL, sold)
            return seat_nos
        locked, params = _LOCKED_SEATS.sql(using=alias, booking_id=booking.pk)
        cursor.execute(_SELL_LOCKED_SEATS_SQL.format(locked=locked), [*params, *sold])
        return [seat_no for (seat_no,) in cursor.fetchall()]
