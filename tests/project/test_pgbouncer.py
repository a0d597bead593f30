"""Seatkeeper through a real PgBouncer (Debian's 1.18) in transaction mode (issue 27).

Most tests use a second pooler of their own with ONE server connection, so two clients are
known to share one PostgreSQL session: whatever one of them leaves in that session, the next
one finds.  Each rule the pooler imposes is shown both ways: what the application does stays
inside its transaction (the test), and what it must not do leaks or breaks (the control).
The module itself runs through the run's pooler (marker `pgbouncer`), as the concurrency,
fault and payment tests do.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection, connections, transaction

from config.database import through_pgbouncer
from flights.models import Seat
from tests.api.conftest import client_for, problem
from tests.pgbouncer import (
    admin_console,
    lock_timeout_for_new_sessions,
    pooler_url,
    routed_through_pgbouncer,
)

# Tests that touch Django's connections are transactional (rerouting them closes connections);
# those that speak to the poolers with their own clients need only the test database to exist.
through_django = pytest.mark.django_db(transaction=True)
pytestmark = [
    pytest.mark.pgbouncer,
    pytest.mark.xdist_group("pgbouncer"),
]

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("run_tests", ROOT / "scripts" / "run_tests.py")
run_tests = sys.modules.setdefault("run_tests", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(run_tests)

# What PgBouncer itself carries from client to client (its "tracked" parameters): a session
# may differ in these, and the pooler sets them on each server connection it hands out.
TRACKED = {"client_encoding", "DateStyle", "TimeZone", "standard_conforming_strings"}
TRACKED |= {"application_name"}


@pytest.fixture(scope="module")
def shared():
    """A PgBouncer whose pool has one server connection, in front of the run's PostgreSQL."""
    with run_tests.private_pgbouncer(
        run_tests.pgbouncer_binary(), os.environ["DATABASE_URL"], pool_size=1
    ) as url:
        yield url


def client(url: str, **options) -> psycopg.Connection:
    options.setdefault("prepare_threshold", None)
    return psycopg.connect(url, dbname=connection.settings_dict["NAME"], autocommit=True, **options)


def direct() -> psycopg.Connection:
    return client(os.environ["DATABASE_URL"])


def show(conn: psycopg.Connection, name: str) -> str:
    return conn.execute("SELECT current_setting(%s)", [name]).fetchone()[0]


def session_state(url: str) -> dict:
    """What a session of the shared server holds beyond its defaults."""
    with client(url) as probe:
        settings_ = probe.execute(
            "SELECT name FROM pg_settings WHERE source = 'session' ORDER BY name"
        ).fetchall()
        locks = probe.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        locks = locks.fetchone()[0]
        cursors = probe.execute("SELECT count(*) FROM pg_cursors").fetchone()[0]
        channels = probe.execute("SELECT count(*) FROM pg_listening_channels()").fetchone()[0]
    return {
        "settings": [name for (name,) in settings_ if name not in TRACKED],
        "advisory_locks": locks,
        "cursors": cursors,
        "listening": channels,
    }


# --- the rig ----------------------------------------------------------------------------------


@through_django
def test_this_module_reaches_postgresql_through_the_runs_pgbouncer():
    pooler_port = pooler_url().rsplit(":", 1)[1].split("/")[0]
    assert str(connection.settings_dict["PORT"]) == pooler_port
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    with admin_console() as console:
        cursor = console.execute("SHOW CLIENTS")
        columns = [c.name for c in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    assert any(row["database"] == connection.settings_dict["NAME"] for row in rows)


def test_two_clients_of_the_one_connection_pooler_share_one_server_session(shared):
    with client(shared) as a, client(shared) as b:
        assert a.execute("SELECT pg_backend_pid()").fetchone() == (
            b.execute("SELECT pg_backend_pid()").fetchone()
        )


# --- settings: only transaction-local ----------------------------------------------------------


def test_a_transaction_local_setting_ends_with_its_transaction(shared):
    with client(shared) as a, client(shared) as b:
        default = show(b, "lock_timeout")
        with a.transaction():
            a.execute("SELECT set_config('lock_timeout', '1ms', true)")
            assert show(a, "lock_timeout") == "1ms"
        assert show(b, "lock_timeout") == default != "1ms"


def test_control_a_session_setting_leaks_to_the_next_client(shared):
    with client(shared) as a, client(shared) as b:
        a.execute("SELECT set_config('lock_timeout', '1ms', false)")  # session-level
        try:
            assert show(b, "lock_timeout") == "1ms"  # b never asked for it
        finally:
            b.execute("RESET lock_timeout")


# --- advisory locks: only transaction-scoped ---------------------------------------------------


def test_a_transaction_advisory_lock_ends_with_its_transaction(shared):
    with client(shared) as a, a.transaction():
        a.execute("SELECT pg_advisory_xact_lock(4242)")
    with direct() as other:
        assert other.execute("SELECT pg_try_advisory_xact_lock(4242)").fetchone() == (True,)


def test_control_a_session_advisory_lock_outlives_the_client_that_took_it(shared):
    with client(shared) as a:
        a.execute("SELECT pg_advisory_lock(4243)")
    # `a` is gone; its lock is not: the pooler's server session still holds it ...
    with direct() as other:
        assert other.execute("SELECT pg_try_advisory_xact_lock(4243)").fetchone() == (False,)
    # ... and whichever client gets that session next owns it.
    with client(shared) as b:
        assert b.execute("SELECT pg_advisory_unlock(4243)").fetchone() == (True,)


# --- the engine's own paths leave nothing in the session -------------------------------------


@through_django
def test_a_hold_through_the_pooler_leaves_no_lock_setting_or_cursor_behind(shared, customer):
    """A hold takes the customer's advisory lock, the idempotency key's advisory lock and a
    local synchronous_commit, all through the one shared server session."""
    from tests.factories import FlightFactory

    flight = FlightFactory()
    before = session_state(shared)
    with routed_through_pgbouncer(shared):
        response = client_for(customer).post(
            "/api/bookings",
            {
                "flightId": flight.pk,
                "fareClass": "ECONOMY",
                "seats": ["12A"],
                "exitRowConfirmed": True,
            },
            format="json",
            HTTP_IDEMPOTENCY_KEY="pooled-hold-1",
        )
        assert response.status_code == 201, response.content[:300]
    assert (
        session_state(shared)
        == before
        == {
            "settings": [],
            "advisory_locks": 0,
            "cursors": 0,
            "listening": 0,
        }
    )


# --- no server-side cursors ----------------------------------------------------------------


def seat_numbers_while_iterating(shared: str, flight) -> tuple[int, int]:
    """Iterate a queryset as waitroom/queue.py's rebuild does (autocommit, chunks); after the
    first row, count the cursors the shared server session holds.  (cursors, rows)"""
    rows = Seat.objects.filter(sale=flight.sale).values_list("seat_no", flat=True)
    iterator = rows.iterator(chunk_size=5)
    next(iterator)
    with client(shared) as probe:
        cursors = probe.execute("SELECT count(*) FROM pg_cursors").fetchone()[0]
    return cursors, 1 + len(list(iterator))


@through_django
def test_pooled_iterators_declare_no_cursor(shared, flight):
    with routed_through_pgbouncer(shared):
        assert connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"] is True
        cursors, rows = seat_numbers_while_iterating(shared, flight)
    assert cursors == 0 and rows == Seat.objects.filter(sale=flight.sale).count() > 5


@through_django
def test_control_a_server_side_cursor_sits_in_the_shared_session(shared, flight):
    """Without DISABLE_SERVER_SIDE_CURSORS, Django DECLAREs a WITH HOLD cursor outside a
    transaction: it lives in the server session between the client's fetches, where the next
    client's transaction finds it (and a pool of several servers may send the next FETCH to one
    that never heard of it)."""
    with routed_through_pgbouncer(shared):
        connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"] = False
        connection.close()
        cursors, _ = seat_numbers_while_iterating(shared, flight)
    assert cursors == 1


# --- no prepared statements --------------------------------------------------------------


@through_django
def test_pooled_connections_never_prepare(shared):
    assert through_pgbouncer(settings.DATABASES["default"])["OPTIONS"]["prepare_threshold"] is None
    seen = []

    def other_client():
        try:
            for n in range(10):
                with connections["default"].cursor() as cursor:
                    cursor.execute("SELECT %s::int + 1", [n])
                    seen.append(cursor.fetchone()[0])
        finally:
            connections.close_all()

    with routed_through_pgbouncer(shared):
        connection.ensure_connection()
        assert connection.connection.prepare_threshold is None
        for n in range(10):  # the same statement, many times, from two clients on one server
            with connection.cursor() as cursor:
                cursor.execute("SELECT %s::int + 1", [n])
        thread = threading.Thread(target=other_client)
        thread.start()
        thread.join(30)
    assert seen == list(range(1, 11))


def test_control_prepared_statements_collide_when_clients_share_a_server(shared):
    with client(shared, prepare_threshold=0) as a, client(shared, prepare_threshold=0) as b:
        a.execute("SELECT %s::int", [1])  # PREPARE _pg3_0 on the shared server
        with pytest.raises(psycopg.errors.DuplicatePreparedStatement):
            b.execute("SELECT %s::int", [2])  # b's own first statement is _pg3_0 as well


# --- no startup options; lock_timeout is the role's ------------------------------------------


def test_settings_pass_no_startup_options():
    assert "options" not in settings.DATABASES["default"].get("OPTIONS", {})


def test_control_pgbouncer_refuses_a_startup_options_packet():
    with pytest.raises(psycopg.OperationalError, match="unsupported startup parameter"):
        client(pooler_url(), options=f"-c lock_timeout={settings.DB_LOCK_TIMEOUT_MS}")


@through_django
def test_every_session_has_the_configured_lock_timeout_directly_and_pooled(shared):
    expected = str(settings.DB_LOCK_TIMEOUT_MS)  # pg_settings' unit is ms
    query = "SELECT setting FROM pg_settings WHERE name = 'lock_timeout'"
    with connection.cursor() as cursor:
        cursor.execute(query)
        assert cursor.fetchone()[0] == expected
    for url in (shared, os.environ["DATABASE_URL"]):
        with client(url) as conn:
            assert conn.execute(query).fetchone()[0] == expected, url


def hold_while_the_seat_is_locked(customer, flight, *, wait: float):
    """POST a hold of 12A while another transaction holds that seat's row lock; the answer, or
    None when none came within `wait` seconds (the lock is then released and the hold ends)."""
    locked, release = threading.Event(), threading.Event()
    answers = []

    def hold_the_row():
        try:
            with transaction.atomic():
                Seat.objects.select_for_update().get(sale=flight.sale, seat_no="12A")
                locked.set()
                release.wait(60)
        finally:
            connections.close_all()

    def ask():
        try:
            answers.append(
                client_for(customer).post(
                    "/api/bookings",
                    {
                        "flightId": flight.pk,
                        "fareClass": "ECONOMY",
                        "seats": ["12A"],
                        "exitRowConfirmed": True,
                    },
                    format="json",
                )
            )
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    assert locked.wait(10)
    asker = threading.Thread(target=ask)
    asker.start()
    asker.join(wait)
    answered = list(answers)
    release.set()
    holder.join(30)
    asker.join(30)
    return answered[0] if answered else None


@through_django
def test_a_lock_wait_through_the_pooler_ends_in_503_too_busy(customer, flight):
    with lock_timeout_for_new_sessions(300):
        started = time.monotonic()
        response = hold_while_the_seat_is_locked(customer, flight, wait=20)
        assert response is not None and time.monotonic() - started < 10
    data = problem(response, 503)
    assert data["type"].endswith("/too-busy") and response["Retry-After"]


@through_django
def test_control_without_the_roles_lock_timeout_the_pooled_hold_just_waits(customer, flight):
    """What a silently dropped startup option (`ignore_startup_parameters`) would leave: no
    lock_timeout, so the hold queues behind the lock for as long as it is held."""
    with lock_timeout_for_new_sessions(0):
        response = hold_while_the_seat_is_locked(customer, flight, wait=3)
    assert response is None  # still waiting after 3 s; it went on once the lock was released
