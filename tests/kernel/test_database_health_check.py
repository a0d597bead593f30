"""The connection health check without a round trip (kernel/database_backend): a reused
connection the server has said nothing on is taken as it is; one the server ended (here
`pg_terminate_backend`, as a restart or failover ends every connection) is found at the
request's first query and replaced, and that request succeeds."""

from __future__ import annotations

import select
import time

import pytest
from django.db import OperationalError, connection, connections
from django.db.backends.postgresql.base import DatabaseWrapper as StockDatabaseWrapper

from kernel.database_backend.base import DatabaseWrapper, server_said_nothing
from tests.pgbouncer import is_pooled

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        is_pooled(),
        reason="through PgBouncer the client's connection is the pooler's: a terminated "
        "server connection is PgBouncer's to replace, not ours",
    ),
]


def reused_connection(wrapper_class=DatabaseWrapper, *, health_checks: bool = True):
    """A persistent connection of the test database, as a web thread keeps one."""
    settings_dict = {
        **connection.settings_dict,
        "CONN_MAX_AGE": None,
        "CONN_HEALTH_CHECKS": health_checks,
    }
    wrapper = wrapper_class(settings_dict, alias="health-probe")
    wrapper.ensure_connection()
    return wrapper


def a_request(wrapper) -> int:
    """What Django does around a request (request_started closes an unusable or obsolete
    connection), then the request's first query: the server process that answered it."""
    wrapper.close_if_unusable_or_obsolete()
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def count_select_one(wrapper) -> list[int]:
    """Counts Django's SELECT 1 checks (`is_usable`) on `wrapper`."""
    calls = []
    real = wrapper.is_usable

    def is_usable():
        calls.append(1)
        return real()

    wrapper.is_usable = is_usable
    return calls


def terminate(pid: int, wrapper) -> None:
    """Ends server process `pid` from the test's own connection, then waits until its end
    has reached the client's socket (the server's FATAL, then EOF)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    poller = select.poll()
    poller.register(wrapper.connection.fileno(), select.POLLIN | select.POLLPRI)
    deadline = time.monotonic() + 10
    while not poller.poll(100):
        assert time.monotonic() < deadline, "the terminated connection's socket stayed quiet"


def test_a_quiet_connection_is_reused_without_select_one():
    wrapper = reused_connection()
    try:
        checks = count_select_one(wrapper)
        first = a_request(wrapper)
        assert [a_request(wrapper) for _ in range(5)] == [first] * 5
        assert checks == []
        assert server_said_nothing(wrapper.connection)
    finally:
        wrapper.close()


def test_a_connection_the_server_ended_is_replaced_and_the_request_succeeds():
    wrapper = reused_connection()
    try:
        before = a_request(wrapper)
        terminate(before, wrapper)
        assert not server_said_nothing(wrapper.connection)
        checks = count_select_one(wrapper)
        after = a_request(wrapper)  # no error: SELECT 1 failed, a new connection answered
        assert after != before
        assert checks == [1]
        assert a_request(wrapper) == after and checks == [1]  # quiet again: no more checks
    finally:
        wrapper.close()


def test_control_without_a_health_check_the_ended_connection_fails_the_request():
    # What the check saves: the same termination, Django's stock backend, checks off.
    wrapper = reused_connection(StockDatabaseWrapper, health_checks=False)
    try:
        terminate(a_request(wrapper), wrapper)
        with pytest.raises(OperationalError):
            a_request(wrapper)
    finally:
        wrapper.close()


def test_the_settings_name_this_backend():
    assert connection.settings_dict["ENGINE"] == "kernel.database_backend"
    assert isinstance(connections["default"], DatabaseWrapper)
