"""The seatless hold on PostgreSQL is ONE statement in autocommit (migration bookings 0026,
bookings.one_statement_hold): no BEGIN, no COMMIT of its own, and what the function makes
transaction-scoped (the customer's advisory lock, `synchronous_commit` off) lasts exactly as
long as that statement's implicit transaction.  Outside any test transaction
(transaction=True), as a web request runs it.  Each guard has a control that breaks it.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest
from django.db import connection, connections
from django.utils import timezone
from psycopg.pq import TransactionStatus

from bookings.customer_holds import hold_seatless
from bookings.errors import BookingClassSoldOut, SoldOut
from bookings.holding import _hold_cap_lock_key, hold_ttl
from bookings.inventory import set_booking_class
from bookings.models import Booking, BookingClass, Inventory, Passenger
from tests.concurrency import locked_elsewhere
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def statements_seen():
    """Every statement this connection sends, with whether it ran in autocommit."""
    seen: list[tuple[str, bool, bool]] = []

    def spy(execute, sql, params, many, context):
        seen.append((sql, connection.get_autocommit(), connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        yield seen


def no_open_transaction() -> bool:
    return connection.connection.info.transaction_status == TransactionStatus.IDLE


def test_a_winning_seatless_hold_is_one_statement_in_autocommit():
    flight, customer = FlightFactory(), UserFactory()
    connection.ensure_connection()
    with statements_seen() as seen:
        booking = hold_seatless(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
        )
    assert [s[1:] for s in seen] == [(True, False)], seen  # autocommit, no atomic block
    assert "seatkeeper_hold_units(" in seen[0][0]
    assert no_open_transaction()
    # Committed by that statement alone: another connection sees it.
    assert _elsewhere(lambda: Booking.objects.get(pk=booking.pk).seat_count) == 2


def test_control_the_python_path_runs_in_a_transaction(settings):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "HOLD_IN_ONE_STATEMENT": False}
    flight, customer = FlightFactory(), UserFactory()
    connection.ensure_connection()
    with statements_seen() as seen:
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    assert len(seen) == 6 and all(s[1:] == (False, True) for s in seen), seen


def test_a_lost_reserve_in_autocommit_leaves_nothing_behind():
    """The function undoes its own booking and passenger INSERTs when the reserve is lost (no
    caller's rollback exists to do it): for the fare row and for a nested booking class."""
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))  # 6 units
    set_booking_class(
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        code="LAUNCH",
        name="Launch",
        rank=1,
        auth_limit=1,
        price=Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY").price,
    )
    customer = UserFactory()
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    before = _counts(flight)
    with pytest.raises(BookingClassSoldOut):
        hold_seatless(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            passengers=2,
            booking_class="LAUNCH",
        )
    assert no_open_transaction()
    assert _counts(flight) == before
    Inventory.objects.filter(sale_id=flight.sale_id, fare_class="ECONOMY").update(held=6)
    before = _counts(flight)
    with pytest.raises(SoldOut):
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
        )
    assert no_open_transaction()
    assert _counts(flight) == before


def _counts(flight) -> tuple:
    return (
        Booking.objects.filter(sale_id=flight.sale_id).count(),
        Passenger.objects.filter(sale_id=flight.sale_id).count(),
        list(Inventory.objects.filter(sale_id=flight.sale_id).values_list("fare_class", "held")),
        list(BookingClass.objects.filter(sale_id=flight.sale_id).values_list("code", "held")),
    )


# --- the transaction-scoped settings end with the statement ----------------------------------


def _advisory_locks_of(pid: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = %s",
            [pid],
        )
        return cursor.fetchone()[0]


def _hold_while_the_fare_row_is_locked(customer, flight) -> tuple[int, int, list]:
    """Hold in a thread while another connection holds the fare row: the function waits in its
    last UPDATE, after the advisory lock.  Returns the hold's backend pid, how many advisory
    locks it held while waiting, and the thread's outcome."""
    fare_row = Inventory.objects.select_for_update().filter(
        sale_id=flight.sale_id, fare_class="ECONOMY"
    )
    started, pid, outcome = threading.Event(), [], []

    def hold() -> None:
        try:
            connection.ensure_connection()
            pid.append(connection.connection.info.backend_pid)
            started.set()
            outcome.append(
                hold_seatless(
                    customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
                )
            )
        except Exception as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    with locked_elsewhere(fare_row.get):
        holder = threading.Thread(target=hold)
        holder.start()
        assert started.wait(10)
        waiting = _wait_until_blocked(pid[0])
        held_while_waiting = _advisory_locks_of(pid[0]) if waiting else -1
    holder.join(30)
    return pid[0], held_while_waiting, outcome


def _wait_until_blocked(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
            row = cursor.fetchone()
        if row and row[0] == "Lock":
            return True
        time.sleep(0.02)
    return False


def test_the_advisory_lock_lasts_until_the_statement_ends():
    flight, customer = FlightFactory(), UserFactory()
    pid, held_while_waiting, outcome = _hold_while_the_fare_row_is_locked(customer, flight)
    assert isinstance(outcome[0], Booking), outcome
    assert held_while_waiting == 1  # the customer's lock, taken first, held while it waits
    # The same customer's lock is free at once after the statement: another session takes it.
    key = _hold_cap_lock_key(customer_id=customer.pk, sale_id=flight.sale_id)
    assert _elsewhere(lambda: _try_lock(key)) is True
    assert _elsewhere(lambda: _advisory_locks_of(pid)) == 0


def _try_lock(key: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [key])
        return cursor.fetchone()[0]


def test_synchronous_commit_is_off_in_the_statement_and_on_after_it(settings):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "HOLD_SYNCHRONOUS_COMMIT": False}
    flight, customer = FlightFactory(), UserFactory()
    assert _setting_during_and_after_a_call(customer, flight) == ("off", "on")


def _setting_during_and_after_a_call(customer, flight) -> tuple[str, str]:
    """Call the function the way bookings.one_statement_hold does, in autocommit, reading the
    setting in the same statement (after the function ran) and in the next one."""
    now = timezone.now()
    connection.ensure_connection()
    assert connection.get_autocommit()
    with connection.cursor() as cursor:
        # The session's own value first (the test cluster may run with it off everywhere).
        cursor.execute("SET synchronous_commit = on")
        cursor.execute(
            "SELECT h.hold_outcome, current_setting('synchronous_commit') FROM "
            "seatkeeper_hold_units(%s, false, %s, %s, 'ECONOMY', '', 1, NULL, %s::text[], %s, "
            "%s, true) AS h",
            [
                _hold_cap_lock_key(customer_id=customer.pk, sale_id=flight.sale_id),
                customer.pk,
                flight.sale_id,
                [""],
                now,
                now + hold_ttl(),
            ],
        )
        outcome, during = cursor.fetchone()
        assert outcome == "held"
        cursor.execute("SHOW synchronous_commit")
        after = cursor.fetchone()[0]
        cursor.execute("RESET synchronous_commit")
    return during, after


@contextmanager
def function_replaced(old: str, new: str):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef('seatkeeper_hold_units'::regproc)")
        real = cursor.fetchone()[0]
        assert old in real
        cursor.execute(real.replace(old, new))
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(real)


def test_control_session_scoped_settings_would_outlive_the_statement():
    """Were the function to take the session's lock and set the session's setting, both
    checks above would see them after the statement."""
    flight, customer = FlightFactory(), UserFactory()
    with (
        function_replaced(
            "set_config('synchronous_commit', 'off', true)",
            "set_config('synchronous_commit', 'off', false)",
        ),
        function_replaced("pg_advisory_xact_lock(p_lock_key)", "pg_advisory_lock(p_lock_key)"),
    ):
        try:
            assert _setting_during_and_after_a_call(customer, flight) == ("off", "off")
            assert _advisory_locks_of(connection.connection.info.backend_pid) == 1
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock_all()")


def _elsewhere(read):
    """`read()` on another thread's connection (its own session)."""
    answer: list = []

    def run() -> None:
        try:
            answer.append(read())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return answer[0]
