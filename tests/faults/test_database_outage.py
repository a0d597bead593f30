"""A database outage is 503 + Retry-After (API problem, pages' page), never 500, and the dead
connection is discarded so the next request reconnects.

The outage here is real: another session kills our backend with `pg_terminate_backend`, which
is what a restart or failover does to every open connection ("terminating connection due to
administrator command").  The whole-server restart mid-sale is `test_pg_restart.py`.
"""

from __future__ import annotations

import psycopg
import pytest
from django.db import OperationalError, connection
from django.test import Client

from bookings.models import Booking
from kernel.dbfaults import is_database_unavailable
from tests import pgbouncer
from tests.api.conftest import client_for, problem

pytestmark = pytest.mark.django_db(transaction=True)


def kill_our_connection() -> None:
    connection.ensure_connection()
    if pgbouncer.is_pooled():
        # Through the pooler our connection is to PgBouncer, and between transactions no
        # backend is ours to terminate (PgBouncer would quietly replace a killed idle one):
        # the pooler itself drops us, as its restart or a failover behind it does.
        pgbouncer.disconnect_clients(connection.settings_dict["NAME"])
        return
    pid = connection.connection.info.backend_pid
    settings = connection.settings_dict
    with psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"],
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        autocommit=True,
    ) as other:
        assert other.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone()[0]


def hold_body(flight):
    return {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        "seats": ["12A"],
        "exitRowConfirmed": True,
    }


def test_api_answers_503_service_unavailable_and_the_next_request_reconnects(customer, flight):
    api = client_for(customer)
    kill_our_connection()

    response = api.post("/api/bookings", hold_body(flight), format="json")

    body = problem(response, 503)
    assert body["type"].endswith("/service-unavailable")
    assert response["Retry-After"] == "2"
    assert body["retryAfter"] == 2
    # The dead connection was thrown away: the retry works on a fresh one.
    retry = api.post("/api/bookings", hold_body(flight), format="json")
    assert retry.status_code == 201, retry.content
    assert Booking.objects.count() == 1


def test_pages_show_the_back_in_a_moment_page(customer, flight):
    browser = Client()
    browser.force_login(customer)
    kill_our_connection()

    page = browser.get("/bookings/")

    assert page.status_code == 503
    assert page["Retry-After"] == "2"
    assert b"Back in a moment" in page.content
    assert browser.get("/bookings/").status_code == 200


def test_an_outage_outside_any_view_is_503_too(customer):
    """The session is read by middleware, before any view: the 500 handler asks the same
    question and answers 503."""
    browser = Client(raise_request_exception=False)
    browser.force_login(customer)
    kill_our_connection()
    page = browser.get("/bookings/")
    assert page.status_code == 503
    kill_our_connection()
    api = browser.get("/api/bookings")
    assert api.status_code == 503
    assert api["Content-Type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    "message",
    [
        "terminating connection due to administrator command",
        "FATAL:  the database system is shutting down",
        "connection failed: FATAL:  sorry, too many clients already",
        'connection to server at "127.0.0.1", port 5999 failed: Connection refused',
        "server closed the connection unexpectedly",
    ],
)
def test_the_outage_messages_psycopg_raises_without_a_sqlstate(message):
    assert is_database_unavailable(OperationalError(message))


def test_lock_timeouts_and_bugs_are_not_outages():
    """Control: a lock timeout is TooBusy's business and a bug stays a 500."""
    lock_timeout = OperationalError("canceling statement due to lock timeout")
    lock_timeout.__cause__ = psycopg.errors.LockNotAvailable("lock timeout")
    assert not is_database_unavailable(lock_timeout)
    assert not is_database_unavailable(ValueError("terminating connection"))
    assert not is_database_unavailable(OperationalError("no such column: foo"))
    shutdown = OperationalError("terminating connection due to administrator command")
    shutdown.__cause__ = psycopg.errors.AdminShutdown("x")
    assert is_database_unavailable(shutdown)
