"""What every hold path shares: a customer's hold (bookings.customer_holds) and a waitlist
offer (bookings.waitlist) both write their HELD booking, take their units and keep to the
customer's hold cap through this module, so each of these rules is written once.

Locks follow the one lock order in docs/architecture.md ("Lock order").
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.utils.translation import gettext

from bookings import booking_classes, catalogue
from bookings.errors import (
    BookingClassSoldOut,
    FareClassNotFound,
    HoldLimitReached,
    SaleClosed,
    SaleNotFound,
    SeatUnavailable,
)
from bookings.models import Booking, BookingStatus, Inventory, Passenger, Sale, Seat, SeatStatus
from bookings.selectors import acts_for_customers
from kernel.compiled import CompiledRead
from kernel.errors import InvalidRequest

# The two statements every hold makes, written out once instead of compiled by the ORM on
# every request: building them was a fifth of a hold's Python time (docs/performance.md,
# "Issue 26: CPU per request").  Plain SQL that PostgreSQL and SQLite both run; the table and
# column names are the models' (tests/bookings/test_hold_statements.py pins them to the ORM's
# own statements' results).
# The status is written in, not a parameter: a prepared statement's generic plan can use
# the partial index on live holds (booking_held_customer_sale_idx) only when its predicate
# is in the statement's text.
_LIVE_HELD_UNITS_SQL = (
    f'SELECT SUM("seat_count") FROM "{Booking._meta.db_table}" '
    f'WHERE "customer_id" = %s AND "sale_id" = %s AND "status" = \'{BookingStatus.HELD.value}\' '
    'AND "expires_at" > %s'
)
_RESERVE_UNITS_SQL = (
    f'UPDATE "{Inventory._meta.db_table}" SET "held" = "held" + %s '
    'WHERE "sale_id" = %s AND "fare_class" = %s '
    'AND "held" <= "capacity" + "overbook_limit" - "sold" - %s'
)


def _datetime_param(value: datetime):
    """`value` as the backend stores a DateTimeField (SQLite keeps text, PostgreSQL
    timestamptz), the way the ORM would have passed it."""
    return connection.ops.adapt_datetimefield_value(value)


def hold_ttl() -> timedelta:
    return settings.SEATKEEPER["HOLD_TTL"]


def max_passengers() -> int:
    return settings.SEATKEEPER["MAX_PASSENGERS"]


def check_party_size(count: int, *, field: str = "seats") -> None:
    """THE party-size rule of a hold and of a waiting party: 1 to MAX_PASSENGERS places."""
    if count < 1:
        raise InvalidRequest(gettext("Choose at least one seat or passenger."), field=field)
    if count > max_passengers():
        raise InvalidRequest(
            gettext("At most %(passengers)s passengers can be booked together.")
            % {"passengers": max_passengers()},
            field=field,
        )


def check_sale_open(sale: Sale, now: datetime) -> None:
    """SaleClosed unless the catalogue's rule (e.g. flights.rules.is_bookable), asked
    through the registry, says open; every path that starts a hold or a waitlist place asks
    here."""
    seller = catalogue.for_sale(sale)
    if not seller.is_open(sale, now=now):
        raise SaleClosed(seller.closed_detail(sale), texts=seller.texts)


def raise_missing_sale_or_class(sale_id: int, fare_class: str) -> None:
    texts = catalogue.texts_of_sale(sale_id)
    if texts is None:
        raise SaleNotFound(gettext("There is no sale %(id)s.") % {"id": sale_id})
    raise FareClassNotFound(
        str(texts.class_not_sold) % {"id": sale_id, "class": fare_class}, texts=texts
    )


# Compiled once per connection (kernel.compiled): the same SQL on every hold.
_OPEN_INVENTORY = CompiledRead(
    Inventory,
    lambda sale_id, fare_class: (
        Inventory.objects.select_related("sale", *catalogue.owner_paths("sale__"))
        .filter(sale_id=sale_id, fare_class=fare_class)
        .order_by("pk")[:1]
    ),
    shape=lambda: tuple(catalogue.owner_paths()),
    sale_id=int,
    fare_class=str,
)


def open_inventory(*, sale_id: int, fare_class: str, now: datetime) -> Inventory:
    """The fare class's inventory row with its sale and catalogue item, read without a lock
    (the price and the sale's state; the units are taken by `reserve_units`): SaleNotFound or
    FareClassNotFound when there is none, SaleClosed when the sale is not open."""
    inventory = _OPEN_INVENTORY.first(sale_id=sale_id, fare_class=fare_class)
    if inventory is None:
        raise_missing_sale_or_class(sale_id, fare_class)
    check_sale_open(inventory.sale, now)
    return inventory


# --- the customer's hold cap -------------------------------------------------------------------


def _lock_customer_on_sale(*, customer_id: int, sale_id: int) -> None:
    """A transaction-scoped advisory lock for one customer on one sale; the first statement of
    every customer's hold, which also makes that hold's COMMIT asynchronous (see below)."""
    if connection.vendor != "postgresql":  # SQLite runs one writer at a time anyway
        return
    key = _hold_cap_lock_key(customer_id=customer_id, sale_id=sale_id)
    with connection.cursor() as cursor:
        if settings.SEATKEEPER["HOLD_SYNCHRONOUS_COMMIT"]:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
        else:
            # A hold's COMMIT need not wait for the WAL flush: the fare row's lock, which every
            # hold of the class queues for, is then held ~2 ms instead of ~6 (pgbench on the
            # hot row, docs/performance.md "Asynchronous hold commits").  Safe because a hold is
            # not money and nothing can depend on it without a durable commit first: WAL is one
            # sequence, so the next synchronous COMMIT (its payment, a sale, any other write)
            # flushes the hold with it.  A PostgreSQL crash can forget only holds from its last
            # ~0.6 s (3 x wal_writer_delay) that nothing else has committed after; those seats
            # are simply free again, never sold twice.  Local to this transaction (is_local),
            # and in the same round trip as the lock.
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s), set_config('synchronous_commit', 'off', true)",
                [key],
            )


def _hold_cap_lock_key(*, customer_id: int, sale_id: int) -> int:
    name = f"hold-cap:{customer_id}:{sale_id}".encode()
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "big", signed=True)


def _try_lock_customer_on_sale(*, customer_id: int, sale_id: int) -> bool:
    """The same advisory lock, only tried (False: one of the customer's holds on this sale is
    running now).  For the waitlist's offers, which already hold the fare row's lock and so
    must never wait for a lock a hold takes first; their COMMIT stays synchronous (money may
    move in the same transaction: a cancellation with refund frees the units)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(%s)",
            [_hold_cap_lock_key(customer_id=customer_id, sale_id=sale_id)],
        )
        return bool(cursor.fetchone()[0])


def _hold_cap_exceeded(
    *, customer: AbstractBaseUser | int, sale_id: int, units: int, now: datetime
) -> int | None:
    """THE cap rule: the cap, if `units` more would give the customer more live held units on
    the sale than MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE; None if within it, or exempt (staff
    and travel agents hold for many people).  The caller holds the customer's advisory lock,
    so two of their holds (or a hold and an offer) count one after the other."""
    cap = settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE"]
    customer_id = customer if isinstance(customer, int) else customer.pk
    with connection.cursor() as cursor:
        cursor.execute(
            _LIVE_HELD_UNITS_SQL,
            [customer_id, sale_id, _datetime_param(now)],
        )
        held = cursor.fetchone()[0]
    if (held or 0) + units <= cap:
        return None
    # The permission is read only when it matters: two statements on the usual path.
    if isinstance(customer, int):
        customer = get_user_model().objects.get(pk=customer_id)
    return hold_cap_of(customer)


def hold_cap_of(customer: AbstractBaseUser) -> int | None:
    """The most live held units `customer` may have on one sale; None: no cap (staff and
    travel agents hold for many people)."""
    if acts_for_customers(customer):
        return None
    return settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE"]


def check_hold_cap(*, customer: AbstractBaseUser, sale_id: int, units: int, now: datetime) -> None:
    """Refuse a hold that would give `customer` more than the cap of live held units on the
    sale.  Called first in the hold's transaction: the per customer and sale advisory lock is
    the first lock a hold takes (before seats and the fare row, so no cycle can form with
    them; only the same customer's holds on the same sale ever wait for it), and it makes two
    parallel holds by one customer count one after the other, so both cannot pass."""
    _lock_customer_on_sale(customer_id=customer.pk, sale_id=sale_id)
    cap = _hold_cap_exceeded(customer=customer, sale_id=sale_id, units=units, now=now)
    if cap is not None:
        raise HoldLimitReached(cap, texts=catalogue.texts_of_sale(sale_id))


def may_offer_within_hold_cap(*, customer_id: int, sale_id: int, units: int, now: datetime) -> bool:
    """Whether a waitlist offer of `units` keeps the customer within the hold cap: the same
    rule as a hold (`_hold_cap_exceeded`) under the same lock, only tried.  False when the
    customer is over it, or is holding on this sale right now (the offer goes to the next
    entry; this one keeps its place for the next release)."""
    if not _try_lock_customer_on_sale(customer_id=customer_id, sale_id=sale_id):
        return False
    return _hold_cap_exceeded(customer=customer_id, sale_id=sale_id, units=units, now=now) is None


# --- writing the hold ---------------------------------------------------------------------


def reserve_units(*, sale_id: int, fare_class: str, units: int, booking_class: str = "") -> bool:
    """Take `units` from the fare class in one conditional UPDATE; True if it won.

    A hold of a nested booking class (docs/fare-classes.md) then takes them from that class
    and every dearer one in one more statement, under this row's lock; if a nested limit is
    reached it raises `BookingClassSoldOut`, and the caller's transaction rolls both back.

    The one reserve of every hold path.  A customer's hold calls it as the last statement
    before COMMIT: every hold of a fare class queues for this one row lock, so it is held for
    one round trip (this UPDATE) plus the COMMIT, never across the booking, passenger and
    seat writes, which need no lock anyone else waits for (new rows, and seat rows the hold
    already locked).  A loser (0 rows) rolls all of them back.  The price was read earlier
    without this lock, in the same transaction: a concurrent price change (set_fare_limits)
    either committed before that read or the hold is priced as if it came first.  Either is
    a price the fare class had while the customer asked, and the booking keeps its own
    `amount`, which is what is charged; no invariant ties it to the row's current price
    (capacity, the one that matters, is checked here, under the lock).  A waitlist offer
    calls it inside the transaction that freed the units, which already holds this row's
    lock.
    """
    with connection.cursor() as cursor:
        cursor.execute(_RESERVE_UNITS_SQL, [units, sale_id, fare_class, units])
        if cursor.rowcount != 1:
            return False
    if booking_class and not booking_classes.reserve_class_units(
        sale_id=sale_id, fare_class=fare_class, booking_class=booking_class, units=units
    ):
        raise BookingClassSoldOut(fare_class, booking_class, sale_id=sale_id)
    return True


def create_held_booking(
    *,
    customer_id: int,
    sale_id: int,
    fare_class: str,
    units: int,
    booking_class: str = "",
    seats: Sequence[Seat] = (),
    names: Sequence[str] = (),
    amount: Decimal,
    currency: str,
    expires_at: datetime,
    now: datetime,
    conditions_confirmed: bool = False,
) -> Booking:
    """The one place a HELD booking is written: the booking, its `seats` (row-locked by the
    caller) marked HELD for it, and one passenger per unit, seated first and in order.
    `conditions_confirmed`: the customer confirmed the conditions of these seats (a flight's
    exit rows) with the hold, recorded on each seated passenger.

    Every hold path calls this inside its transaction (a customer's hold, a seatless hold, a
    waitlist offer); taking the units from the fare inventory stays the caller's, since each
    path reserves them at a different point (docs/architecture.md, "Lock order")."""
    booking = held_booking(
        customer_id=customer_id,
        sale_id=sale_id,
        fare_class=fare_class,
        units=units,
        booking_class=booking_class,
        amount=amount,
        currency=currency,
        expires_at=expires_at,
        now=now,
    )
    booking.save(force_insert=True)
    if seats:
        claimed = Seat.objects.filter(
            pk__in=[s.pk for s in seats], status=SeatStatus.AVAILABLE
        ).update(status=SeatStatus.HELD, booking=booking, held_until=expires_at)
        if claimed != len(seats):  # unreachable while the caller holds the seat locks
            raise SeatUnavailable([s.seat_no for s in seats])
    # The rows just written travel with the booking, so the answer to the hold is built
    # from them instead of being read back (bookings.selectors.booking_just_written).
    booking.written_passengers = Passenger.objects.bulk_create(
        held_passengers(
            booking, seats=seats, names=names, now=now, conditions_confirmed=conditions_confirmed
        )
    )
    return booking


def held_booking(
    *,
    customer_id: int,
    sale_id: int,
    fare_class: str,
    units: int,
    booking_class: str,
    amount: Decimal,
    currency: str,
    expires_at: datetime,
    now: datetime,
) -> Booking:
    """The HELD booking a hold writes, not yet saved (the one-statement hold,
    bookings.one_statement_hold, builds the same instance for the row its function wrote)."""
    return Booking(
        customer_id=customer_id,
        sale_id=sale_id,
        fare_class=fare_class,
        booking_class=booking_class,
        status=BookingStatus.HELD,
        seat_count=units,
        amount=amount,
        currency=currency,
        expires_at=expires_at,
        created_at=now,
        updated_at=now,
    )


def held_passengers(
    booking: Booking,
    *,
    seats: Sequence[Seat] = (),
    names: Sequence[str] = (),
    now: datetime,
    conditions_confirmed: bool = False,
) -> list[Passenger]:
    """One passenger per unit of `booking`, seated first and in order, named by `names` (the
    rest blank), not yet saved."""
    places = [*seats, *[None] * (booking.seat_count - len(seats))]
    full_names = [*names, *[""] * (booking.seat_count - len(names))]
    return [
        Passenger(
            booking=booking,
            sale_id=booking.sale_id,
            seat=seat,
            full_name=name,
            seat_conditions_confirmed_at=now if conditions_confirmed and seat else None,
        )
        for seat, name in zip(places, full_names, strict=True)
    ]
