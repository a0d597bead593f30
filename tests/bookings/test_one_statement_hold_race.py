"""The customer's cap stays race-free when the hold is one statement (the function of migration
bookings 0025): two seatless holds by one customer at the same moment, on two fare classes (two
different inventory rows, so only the cap's advisory lock orders them), cannot both pass.  The
function takes each statement's snapshot after the lock is granted (VOLATILE), so the second
hold's SUM sees the first one's booking.  The control takes the lock out of the function and
shows both passing.

Both tests put a gate after the cap's SUM: a call waits there (up to 2 s) until the other call
has summed too.  Without the lock both sums are then taken before either booking is written,
whatever the machine's load (a sleep before the SUM only made that likely); with the lock the
second call is still waiting for the lock, so the first one's gate times out and it commits
before the second sums."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from django.db import connection

from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless
from bookings.models import Booking, BookingStatus
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]

LOCK = "PERFORM pg_advisory_xact_lock(p_lock_key);"


SUMMED = "IF COALESCE(v_held, 0) + p_units > p_cap THEN"
# Counted by a sequence: nextval is seen by every session at once, outside transactions.
GATE = (
    "PERFORM nextval('hold_race_gate'); "
    "FOR i IN 1..200 LOOP "
    "EXIT WHEN (SELECT last_value FROM hold_race_gate) >= 2; PERFORM pg_sleep(0.01); "
    "END LOOP; "
)


@contextmanager
def function_with(*, lock: str):
    """The function with its advisory lock statement replaced by `lock` and the gate after the
    cap's SUM (committed: the racers are other connections); the real one put back afterwards."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef('seatkeeper_hold_units'::regproc)")
        real = cursor.fetchone()[0]
        assert LOCK in real and SUMMED in real
        cursor.execute("DROP SEQUENCE IF EXISTS hold_race_gate")
        cursor.execute("CREATE SEQUENCE hold_race_gate")
        cursor.execute(real.replace(LOCK, lock).replace(SUMMED, GATE + SUMMED))
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(real)
            cursor.execute("DROP SEQUENCE hold_race_gate")


def two_cabins_at_once(customer, flight):
    return run_concurrently(
        [
            lambda code=code: hold_seatless(
                customer=customer, sale_id=flight.sale_id, fare_class=code, passengers=3
            )
            for code in ("BUSINESS", "ECONOMY")
        ]
    )


@pytest.fixture
def cap_of_four(settings):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": 4}


def test_parallel_one_statement_holds_by_one_customer_cannot_both_pass_the_cap(cap_of_four):
    flight = FlightFactory()
    customer = UserFactory()
    # The same gate as the control: the first call waits there for the second one's SUM.
    with function_with(lock=LOCK):
        outcomes = two_cabins_at_once(customer, flight)
    assert len(outcomes.results) == 1, outcomes.errors
    assert outcomes.error_kinds == {"HoldLimitReached": 1}
    live = Booking.objects.filter(customer=customer, status=BookingStatus.HELD)
    assert sum(b.seat_count for b in live) == 3
    assert check_inventory(sale_id=flight.sale_id) == []


def test_control_without_the_lock_in_the_function_the_cap_is_exceeded(cap_of_four):
    flight = FlightFactory()
    with function_with(lock=""):
        outcomes = two_cabins_at_once(UserFactory(), flight)
    assert len(outcomes.results) == 2, outcomes.errors
