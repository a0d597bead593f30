"""Issue 27, item 3: reads that may lag come from a real streaming replica of the run's
cluster (tests/pg_replica.py), with the lag bounded, and fall back to the primary; holds and
everything inside a transaction never read from it (kernel/replica.py)."""

from __future__ import annotations

import json
import os
import time

import pytest
from django.core.cache import cache
from django.db import connections, transaction
from django.test.utils import CaptureQueriesContext

from bookings.customer_holds import hold_seats
from events.selectors import search_events
from flights.models import Flight
from flights.selectors import seat_map_json
from kernel import replica
from tests.factories import FlightFactory, UserFactory
from tests.pg_replica import streaming_standby

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", replica.ALIAS])

PRIMARY_URL = os.environ.get("DATABASE_URL", "")


@pytest.fixture(scope="module")
def standby(django_db_setup, django_db_blocker):
    """A hot standby of the run's PostgreSQL, named as the `replica` alias for this module.
    (Module scope: the alias must exist before pytest-django checks the mark's databases.)"""
    if not PRIMARY_URL.startswith("postgres"):
        pytest.fail("the replica tests need DATABASE_URL: run them with ./scripts/test")
    with streaming_standby(PRIMARY_URL) as server:
        default = connections.settings["default"]
        connections.settings[replica.ALIAS] = {
            **default,
            "HOST": server.host,
            "PORT": str(server.port),
            "OPTIONS": {**default["OPTIONS"], "connect_timeout": 2},
            # A mirror to the test framework: never flushed, never created; its own server.
            "TEST": {**default["TEST"], "MIRROR": "default"},
        }
        try:
            yield server
        finally:
            connections[replica.ALIAS].close()
            del connections[replica.ALIAS]
            del connections.settings[replica.ALIAS]


@pytest.fixture
def routed(standby, settings):
    settings.DATABASE_ROUTERS = ["kernel.replica.ReplicaRouter"]
    settings.REPLICA = {"MAX_LAG_SECONDS": 1.0, "CHECK_SECONDS": 0.0, "CATCH_UP_WAIT_SECONDS": 2.0}
    replica.reset()
    standby.resume()
    yield standby
    standby.resume()
    replica.reset()


def _primary_url() -> str:
    # The test database, not the URL's: the standby streams the whole cluster.
    name = connections["default"].settings_dict["NAME"]
    return PRIMARY_URL.rsplit("/", 1)[0] + "/" + name


def _back_in_use(standby) -> str:
    """The alias reads get once the standby streams again, polled within 15 s: it is back in
    use once it has replayed a position the primary had at an earlier check, and the first
    check after a restart or a resume may find it a few bytes behind a primary that the other
    test workers keep writing to (lag unknown, so: the primary)."""
    deadline = time.monotonic() + 15
    while True:
        standby.wait_caught_up(_primary_url())
        with replica.reads_within_lag() as alias:
            if alias == replica.ALIAS or time.monotonic() > deadline:
                return alias
        time.sleep(0.1)


def _map(flight: Flight) -> dict:
    cache.clear()  # a rebuild every time: what is measured is where the seats are read
    found = seat_map_json(
        flight_id=flight.pk, render=lambda data: json.dumps(data, default=str).encode()
    )
    return {seat["seat_no"]: seat["status"] for seat in json.loads(found.body)["seats"]}


def test_the_seat_map_is_read_from_the_replica_while_holds_are_decided_on_the_primary(routed):
    flight, customer = FlightFactory(), UserFactory()
    routed.wait_caught_up(_primary_url())
    with CaptureQueriesContext(connections[replica.ALIAS]) as on_replica:
        seats = _map(flight)
    assert seats["20A"] == "AVAILABLE"
    assert any("seat" in q["sql"].lower() for q in on_replica.captured_queries)

    with CaptureQueriesContext(connections[replica.ALIAS]) as during_hold:
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
        )
    assert during_hold.captured_queries == []

    routed.wait_caught_up(_primary_url())
    with CaptureQueriesContext(connections[replica.ALIAS]) as on_replica:
        assert _map(flight)["20A"] == "HELD"
    assert on_replica.captured_queries


def test_a_rebuild_on_a_lagging_replica_reads_the_primary_so_no_version_claims_older_seats(
    routed,
):
    flight, customer = FlightFactory(), UserFactory()
    routed.wait_caught_up(_primary_url())
    routed.pause()
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    with CaptureQueriesContext(connections[replica.ALIAS]) as on_replica:
        assert _map(flight)["20A"] == "HELD"
    assert not any("seat" in q["sql"].lower() for q in on_replica.captured_queries)


def test_control_a_rebuild_that_trusts_the_lag_bound_alone_caches_older_seats(routed, monkeypatch):
    """The guard above is what keeps the map right: reading the same lagging replica by the
    lag bound alone (within 1 s) serves the seat as free under the new version."""
    flight, customer = FlightFactory(), UserFactory()
    routed.wait_caught_up(_primary_url())
    assert replica.health(fresh=True).up
    routed.pause()
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20A"]
    )
    monkeypatch.setattr(replica, "_caught_up_with_primary", replica._usable_within_lag)
    assert _map(flight)["20A"] == "AVAILABLE"


def test_a_replica_that_stops_replaying_is_dropped_after_the_bound(routed):
    # In use first (polled: the other worker's writes may keep it a few bytes behind at one check).
    assert _back_in_use(routed) == replica.ALIAS
    routed.pause()
    FlightFactory()  # the primary moves on
    with replica.reads_within_lag() as alias:
        assert alias == replica.ALIAS  # behind, but by less than the bound
    time.sleep(1.3)
    FlightFactory()
    with replica.reads_within_lag() as alias:
        assert alias == "default"
    with CaptureQueriesContext(connections[replica.ALIAS]) as on_replica:
        search_events(city="Berlin")
    assert not any("events_event" in q["sql"] for q in on_replica.captured_queries)

    routed.resume()
    assert _back_in_use(routed) == replica.ALIAS


def test_an_idle_primary_shows_no_false_lag(routed):
    """By WAL position: a replica that has everything is not 'behind' because nothing was
    written for a while (pg_last_xact_replay_timestamp would say it is)."""
    routed.wait_caught_up(_primary_url())
    first = replica.health(fresh=True)
    time.sleep(1.5)
    # The cluster is shared with the other xdist worker: its WAL can land between the
    # catch-up and the check, and then the replica is briefly behind for real.  A false lag
    # (the idle time read as lag) shows on every look, so three looks cannot hide it.
    for _ in range(3):
        routed.wait_caught_up(_primary_url())
        later = replica.health(fresh=True)
        if later.lag <= 1.0:
            break
    assert first.up and later.up
    assert later.lag <= 1.0


def test_a_replica_that_is_down_falls_back_to_the_primary(routed):
    flight = FlightFactory()
    routed.stop()
    try:
        replica.reset()
        with replica.reads_within_lag() as alias:
            assert alias == "default"
        assert _map(flight)["20A"] == "AVAILABLE"  # served, from the primary
        assert search_events() == []
    finally:
        routed.start()
    replica.reset()
    assert _back_in_use(routed) == replica.ALIAS


def test_reads_inside_a_transaction_and_every_write_stay_on_the_primary(routed):
    FlightFactory()
    routed.wait_caught_up(_primary_url())
    with (
        CaptureQueriesContext(connections[replica.ALIAS]) as on_replica,
        replica.reads_within_lag() as alias,
        transaction.atomic(),
    ):
        assert alias == replica.ALIAS
        assert Flight.objects.count() == 1
        Flight.objects.update(code="SK999")
    assert on_replica.captured_queries == [] or all(
        "pg_is_in_recovery" in q["sql"] for q in on_replica.captured_queries
    )
    router = replica.ReplicaRouter()
    assert router.db_for_write(Flight) == "default"
    assert router.db_for_read(Flight) == "default"  # outside a block
