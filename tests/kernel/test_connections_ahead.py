"""A web process opens its HTTP threads' connections at start (config/warmup.py
`open_connections_ahead`, kernel/database_backend/ahead.py): each thread's first request
takes a database connection opened and warmed ahead instead of connecting, and the Redis
pools already hold one connection per thread.  Each guard has its control: switched off
(WEB_WARM_CONNECTIONS=0) every thread connects on its first query."""

from __future__ import annotations

import logging
import threading

import pytest
from django.core.cache import cache
from django.db import connection, connections

from bookings import availability
from bookings.models import Booking
from config import warmup
from kernel.database_backend import ahead
from tests.pgbouncer import is_pooled

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 3


@pytest.fixture(autouse=True)
def nothing_kept_after():
    ahead.close_all()
    yield
    ahead.close_all()


def connects_per_thread(monkeypatch) -> list[int]:
    """Starts THREADS threads together, each running one query on its own connection, as
    HTTP threads meet their first requests at the start of a sale; the driver connects each
    one made (0 when it was handed one opened ahead)."""
    wrapper_class = type(connections["default"])
    real = wrapper_class.Database.connect
    counts: dict[int, int] = {}
    lock = threading.Lock()

    def counting_connect(*args, **kwargs):
        with lock:
            counts[threading.get_ident()] = counts.get(threading.get_ident(), 0) + 1
        return real(*args, **kwargs)

    monkeypatch.setattr(wrapper_class.Database, "connect", counting_connect)
    barrier = threading.Barrier(THREADS)
    seen: list[int] = []

    def first_request() -> None:
        barrier.wait()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            with lock:
                seen.append(counts.get(threading.get_ident(), 0))
        finally:
            connection.close()

    threads = [threading.Thread(target=first_request) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == THREADS
    return seen


def test_each_threads_first_query_takes_a_connection_opened_ahead(monkeypatch, caplog):
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", str(THREADS))
    with caplog.at_level(logging.WARNING):
        warmup.open_connections_ahead()
    # The warm-up statements (the hold's, the token's) are valid against the real schema:
    # a failed one would only be logged, and its warmth silently lost.
    assert not [r for r in caplog.records if "warm" in r.getMessage()], caplog.text
    assert ahead.kept("default") == THREADS
    # Configured as Django configures a new connection (its time zone), so the thread's
    # first request has nothing left to set.
    wrapper = connections["default"]
    for kept, _level in ahead._kept["default"]:
        assert kept.info.parameter_status("TimeZone") == wrapper.timezone_name
    assert connects_per_thread(monkeypatch) == [0] * THREADS
    assert ahead.kept("default") == 0


def test_control_without_the_warm_up_every_thread_connects(monkeypatch):
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", "0")
    warmup.open_connections_ahead()
    assert ahead.kept("default") == 0
    assert connects_per_thread(monkeypatch) == [1] * THREADS


def test_more_threads_than_opened_ahead_connect_as_before(monkeypatch):
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", "1")
    warmup.open_connections_ahead()
    assert sorted(connects_per_thread(monkeypatch)) == [0] + [1] * (THREADS - 1)


def test_the_warm_up_writes_nothing(monkeypatch):
    before = Booking.objects.count()
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", "2")
    warmup.open_connections_ahead()
    assert Booking.objects.count() == before
    with connection.cursor() as cursor:  # nothing left open on the server either
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND state LIKE 'idle in transaction%%'"
        )
        assert cursor.fetchone()[0] == 0


@pytest.mark.skipif(
    is_pooled(), reason="through PgBouncer a terminated server connection is the pooler's"
)
def test_a_connection_the_server_ended_while_kept_is_skipped(monkeypatch):
    connection.ensure_connection()  # this thread's own, not the one kept below
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", "1")
    warmup.open_connections_ahead()
    [(kept, _level)] = ahead._kept["default"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [kept.info.backend_pid])
    # The thread is not handed the dead one: it connects, and its query succeeds.
    assert connects_per_thread(monkeypatch) == [1] * THREADS


def test_a_forked_child_takes_none_of_its_parents_connections(monkeypatch):
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", str(THREADS))
    warmup.open_connections_ahead()
    monkeypatch.setattr(ahead.os, "getpid", lambda: -1)
    assert ahead.take("default", lambda _: True) is None


def idle_redis_connections() -> list[int]:
    pools = [cache.client.get_client(write=True).connection_pool]
    if availability.filters_client() is not None:
        pools.append(availability.filters_client().connection_pool)
    return [len(pool._available_connections) for pool in pools]


def test_the_redis_pools_hold_a_connection_per_thread(monkeypatch):
    for pool in (cache.client.get_client(write=True).connection_pool,):
        pool.disconnect()
        pool.reset()
    if availability.filters_client() is not None:
        availability.filters_client().connection_pool.reset()
    # The control first: an untouched pool holds no connection.
    assert set(idle_redis_connections()) == {0}
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", str(THREADS))
    warmup.open_connections_ahead()
    assert set(idle_redis_connections()) == {THREADS}


def test_the_threads_own_redis_connections_are_opened_ahead(monkeypatch):
    """kernel.redis_own_connection's, for the token check's and the filters' scripts."""
    from kernel import redis_own_connection

    clients = [cache.client.get_client(write=True), availability.filters_client()]
    pools = [c.connection_pool for c in clients if redis_own_connection.takes_own_connection(c)]
    if not pools:
        pytest.skip("no single-server Redis client in this run (the cluster's go redis-py's way)")
    stocked = {
        id(pool): len(redis_own_connection._ahead.get(id(pool), (0, 0, []))[2]) for pool in pools
    }
    monkeypatch.setenv("WEB_WARM_CONNECTIONS", str(THREADS))
    warmup.open_connections_ahead()
    for pool in pools:
        assert len(redis_own_connection._ahead[id(pool)][2]) == stocked[id(pool)] + THREADS
        for _ in range(THREADS):  # taken back: the next tests' threads connect as before
            redis_own_connection._ahead[id(pool)][2].pop().disconnect()
