"""The seatless hold in one PostgreSQL statement: `seatkeeper_hold_units` (the function of
migration bookings 0024) called once, with the fare class's inventory row, its sale and
catalogue item read beside it in the same statement.

A winning hold is then BEGIN, this statement and COMMIT instead of eight statements
(docs/performance.md, "Issue 26: the hold in one statement").  The Python path
(bookings.customer_holds._hold_units with bookings.holding) stays the rule for SQLite, for a
booking with seats, and with `HOLD_IN_ONE_STATEMENT` off; tests/bookings/
test_one_statement_hold.py runs random sequences of holds, expiries and cancels through both
and compares every row and counter.  Refusals are the same domain exceptions, in the same
order: the cap first, then a missing sale or class, then the catalogue's Python rules (the
sale is open, it sells seatless units) on the rows read beside the call, then a missing
booking class, then sold out.  Whatever the call wrote before a refusal is rolled back by the
caller's transaction when the exception leaves it, as on the Python path.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection

from bookings import booking_classes, catalogue
from bookings.errors import BookingClassSoldOut, HoldLimitReached, SeatsRequired, SoldOut
from bookings.holding import (
    _OPEN_INVENTORY,
    _hold_cap_lock_key,
    check_sale_open,
    hold_cap_of,
    raise_missing_sale_or_class,
)
from bookings.models import Booking, BookingStatus, Passenger

_CALL = "seatkeeper_hold_units(%s, %s, %s, %s, %s, %s, %s, %s, %s::text[], %s, %s)"


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
    """`_hold_units` in one statement; the caller's transaction is open (`atomic`)."""
    full_names = [*names, *[""] * (passengers - len(names))]
    cap = settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE"]
    answer, inventory = _call(
        customer=customer,
        sale_id=sale_id,
        fare_class=fare_class,
        booking_class=booking_class,
        units=passengers,
        cap=cap,
        names=full_names,
        now=now,
        expires_at=expires_at,
    )
    if answer[0] == "cap":
        # The permission is read only when it matters (as `holding._hold_cap_exceeded`):
        # staff and travel agents have no cap, so they ask again without one.
        if hold_cap_of(customer) is not None:
            raise HoldLimitReached(cap, texts=catalogue.texts_of_sale(sale_id))
        answer, inventory = _call(
            customer=customer,
            sale_id=sale_id,
            fare_class=fare_class,
            booking_class=booking_class,
            units=passengers,
            cap=None,
            names=full_names,
            now=now,
            expires_at=expires_at,
        )
    outcome, booking_id, amount, currency, passenger_ids = answer
    if outcome == "missing" or inventory is None:
        raise_missing_sale_or_class(sale_id, fare_class)
    sale = inventory.sale
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
    return _as_written(
        booking_id=booking_id,
        customer_id=customer.pk,
        sale=sale,
        fare_class=fare_class,
        booking_class=booking_class,
        units=passengers,
        amount=amount,
        currency=currency,
        expires_at=expires_at,
        now=now,
        passenger_ids=passenger_ids,
        names=full_names,
    )


def _call(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    booking_class: str,
    units: int,
    cap: int | None,
    names: list[str],
    now: datetime,
    expires_at: datetime,
):
    params = [
        _hold_cap_lock_key(customer_id=customer.pk, sale_id=sale_id),
        settings.SEATKEEPER["HOLD_SYNCHRONOUS_COMMIT"],
        customer.pk,
        sale_id,
        fare_class,
        booking_class,
        units,
        cap,
        names,
        now,
        expires_at,
    ]
    return _OPEN_INVENTORY.beside(
        _CALL, params, using=connection.alias, sale_id=sale_id, fare_class=fare_class
    )


def _as_written(
    *,
    booking_id: int,
    customer_id: int,
    sale,
    fare_class: str,
    booking_class: str,
    units: int,
    amount,
    currency: str,
    expires_at: datetime,
    now: datetime,
    passenger_ids: list[int],
    names: list[str],
) -> Booking:
    """The instances `holding.create_held_booking` would have left: the booking with its sale
    (and catalogue item) and `written_passengers` (bookings.selectors.booking_just_written)."""
    booking = Booking(
        pk=booking_id,
        customer_id=customer_id,
        sale_id=sale.pk,
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
    booking._state.adding = False
    booking._state.db = connection.alias
    booking.sale = sale
    passengers = []
    for pk, name in zip(passenger_ids, names, strict=True):
        passenger = Passenger(pk=pk, booking=booking, sale_id=sale.pk, seat=None, full_name=name)
        passenger._state.adding = False
        passenger._state.db = connection.alias
        passengers.append(passenger)
    booking.written_passengers = passengers
    return booking
