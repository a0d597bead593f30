"""The seatless hold in one PostgreSQL statement: `seatkeeper_hold_units` (the function of
migrations bookings 0025 and 0026) called once, with the fare class's inventory row, its sale
and catalogue item read beside it in the same statement.

A winning hold is this one statement in autocommit, its own transaction: no BEGIN, no COMMIT
(docs/performance.md, "Issue 26: the hold as one autocommit statement").  The function asks
every rule before it writes (the catalogues' "sale open" and "sold without seats" rules in
their SQL copy), and undoes its own writes when the reserve is lost, so a refusal leaves
nothing behind and needs no rollback.  The Python path (bookings.customer_holds._hold_units
with bookings.holding) stays the rule for SQLite, for a booking with seats, and with
`HOLD_IN_ONE_STATEMENT` off; tests/bookings/test_one_statement_hold.py runs random sequences
of holds, expiries, cancels and sale states through both and compares every row and counter.
Refusals are the same domain exceptions, in the same order: the cap, a missing sale or class,
the sale closed, seats required, a missing booking class, sold out, booking class sold out;
the read beside the call gives Python what their messages need.

A catalogue whose rules have no SQL copy (`catalogue.rules_in_hold_function`: a stand-in in
tests) keeps the earlier shape: the call inside a transaction, the rules asked in Python on the
rows read beside it, and a refusal rolling the call's writes back.
"""

from __future__ import annotations

import functools
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Model

from bookings import booking_classes, catalogue
from bookings.errors import BookingClassSoldOut, HoldLimitReached, SeatsRequired, SoldOut
from bookings.holding import (
    _OPEN_INVENTORY,
    _hold_cap_lock_key,
    check_sale_open,
    held_booking,
    held_passengers,
    hold_cap_of,
    open_inventory,
    raise_missing_sale_or_class,
)
from bookings.models import Booking

_CALL = "seatkeeper_hold_units(%s, %s, %s, %s, %s, %s, %s, %s, %s::text[], %s, %s, %s)"


def applies() -> bool:
    """Whether this connection holds in one statement: PostgreSQL with the switch on."""
    return connection.vendor == "postgresql" and settings.SEATKEEPER["HOLD_IN_ONE_STATEMENT"]


def hold_units(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    booking_class: str,
    passengers: int,
    names: list[str],
    now: datetime,
    expires_at: datetime,
) -> Booking:
    """`customer_holds._hold_units` in one statement, which is its own transaction (or a part
    of the caller's, if the caller has one open: it writes nothing unless it wins)."""
    hold = functools.partial(
        _hold,
        customer=customer,
        sale_id=sale_id,
        fare_class=fare_class,
        booking_class=booking_class,
        passengers=passengers,
        names=names,
        now=now,
        expires_at=expires_at,
    )
    if catalogue.rules_in_hold_function():
        return hold(rules_in_sql=True)
    with transaction.atomic():
        return hold(rules_in_sql=False)


def _hold(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    booking_class: str,
    passengers: int,
    names: list[str],
    now: datetime,
    expires_at: datetime,
    rules_in_sql: bool,
) -> Booking:
    full_names = [*names, *[""] * (passengers - len(names))]
    cap = settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE"]
    call = functools.partial(
        _call,
        customer_id=customer.pk,
        sale_id=sale_id,
        fare_class=fare_class,
        booking_class=booking_class,
        units=passengers,
        names=full_names,
        now=now,
        expires_at=expires_at,
        check_rules=rules_in_sql,
    )
    answer, inventory = call(cap=cap)
    if answer[0] == "cap":
        # The permission is read only when it matters (as `holding._hold_cap_exceeded`):
        # staff and travel agents have no cap, so they ask again without one (a second
        # statement; the first wrote nothing).
        if hold_cap_of(customer) is not None:
            raise HoldLimitReached(cap, texts=catalogue.texts_of_sale(sale_id))
        answer, inventory = call(cap=None)
    outcome, booking_id, amount, currency, passenger_ids = answer
    if outcome == "missing":
        raise_missing_sale_or_class(sale_id, fare_class)
    if inventory is None:
        if not rules_in_sql:
            raise_missing_sale_or_class(sale_id, fare_class)
        # The read beside the call has the statement's snapshot, older than the function's
        # (each of its statements takes a fresh one): the fare class appeared in between.
        # Read again, asking no rule (a won hold has committed: its answer is owed).
        inventory = _OPEN_INVENTORY.first(sale_id=sale_id, fare_class=fare_class)
        if inventory is None:
            raise AssertionError("the hold function found a fare class the ORM does not")
    sale = inventory.sale
    if rules_in_sql:
        _refuse_as_the_function_did(outcome, sale=sale, fare_class=fare_class, now=now)
    else:
        check_sale_open(sale, now)
        if not catalogue.sells_seatless(sale, fare_class):
            raise SeatsRequired(fare_class)
    if outcome == "no-class":
        # The one message of a missing booking class is the Python path's.
        booking_classes.price_of(
            sale_id=sale_id, fare_class=fare_class, booking_class=booking_class
        )
        raise AssertionError("the function found no booking class the ORM finds")
    if outcome == "sold-out":
        raise SoldOut(fare_class, texts=catalogue.for_sale(sale).texts)
    if outcome == "class-sold-out":
        raise BookingClassSoldOut(fare_class, booking_class, sale_id=sale_id)
    if outcome != "held":
        raise AssertionError(f"seatkeeper_hold_units answered {outcome!r}")
    # The instances `holding.create_held_booking` would have left, for the rows the function
    # wrote: the booking with its sale (and catalogue item) and `written_passengers`
    # (bookings.selectors.booking_just_written).
    booking = _as_saved(
        held_booking(
            customer_id=customer.pk,
            sale_id=sale_id,
            fare_class=fare_class,
            units=passengers,
            booking_class=booking_class,
            amount=amount,
            currency=currency,
            expires_at=expires_at,
            now=now,
        ),
        booking_id,
    )
    booking.sale = sale
    written = held_passengers(booking, names=full_names, now=now)
    booking.written_passengers = [
        _as_saved(p, pk) for p, pk in zip(written, passenger_ids, strict=True)
    ]
    return booking


def _refuse_as_the_function_did(outcome: str, *, sale, fare_class: str, now: datetime) -> None:
    """The function refused by a catalogue rule's SQL copy: raise what the Python rule raises
    (its message needs the rows read beside the call).  The copies are proven equal
    (tests/bookings/test_one_statement_hold.py); should they ever disagree, say so loudly."""
    if outcome == "closed":
        check_sale_open(sale, now)
        # The rows beside the call are older than the function's look (a sale closed in
        # between): ask the rule again on the rows as they are now.
        open_inventory(sale_id=sale.pk, fare_class=fare_class, now=now)
        raise AssertionError("the hold function found the sale closed, the catalogue open")
    if outcome == "seats-required":
        if catalogue.sells_seatless(sale, fare_class):
            raise AssertionError("the hold function requires seats, the catalogue does not")
        raise SeatsRequired(fare_class)


def _call(*, sale_id: int, fare_class: str, **arguments):
    """The statement with `_call_params(...)`'s arguments, and the open fare class read beside
    it."""
    params = _call_params(sale_id=sale_id, fare_class=fare_class, **arguments)
    return _OPEN_INVENTORY.beside(
        _CALL, params, using=connection.alias, sale_id=sale_id, fare_class=fare_class
    )


def _call_params(
    *,
    customer_id: int,
    sale_id: int,
    fare_class: str,
    booking_class: str,
    units: int,
    cap: int | None,
    names: list[str],
    now: datetime,
    expires_at: datetime,
    check_rules: bool,
) -> list:
    """`_CALL`'s arguments, in the function's order (the hold and the warm-up both use it)."""
    return [
        _hold_cap_lock_key(customer_id=customer_id, sale_id=sale_id),
        settings.SEATKEEPER["HOLD_SYNCHRONOUS_COMMIT"],
        customer_id,
        sale_id,
        fare_class,
        booking_class,
        units,
        cap,
        names,
        now,
        expires_at,
        check_rules,
    ]


def _as_saved(instance: Model, pk: int) -> Model:
    instance.pk = pk
    instance._state.adding = False
    instance._state.db = connection.alias
    return instance


def warm_connection(driver_connection) -> None:
    """A new database connection's warm-up (config/warmup.py): this statement for a sale
    that does not exist, so the server compiles `seatkeeper_hold_units`, plans its cap and
    inventory reads and loads the tables' catalogue entries before a customer's hold does.
    It answers 'missing' and writes nothing; the caller rolls back all the same."""
    from django.utils import timezone

    now = timezone.now()
    params = _call_params(
        customer_id=0,
        sale_id=0,
        fare_class="ECONOMY",
        booking_class="",
        units=1,
        cap=1,
        names=[""],
        now=now,
        expires_at=now,
        check_rules=True,
    )
    sql, params = _OPEN_INVENTORY.beside_sql(
        _CALL, params, using=connection.alias, sale_id=0, fare_class="ECONOMY"
    )
    driver_connection.execute(sql, params).fetchall()
