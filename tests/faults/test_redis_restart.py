"""Redis restarted *empty* mid-sale (a crash with no persistence), on a Redis of our own.

Everything in Redis is derived or disposable: after the restart throttles count again, caches
refill from the database, the channel layer delivers again, and seat-map versions keep going
up (the counter is reborn at a time epoch), so an open page resyncs instead of ignoring
pushes.  Holds live in PostgreSQL: nobody holding loses their place.
"""

from __future__ import annotations

import shutil

import pytest

from bench.stack import ThrowawayRedis
from bookings.live import current_version, publish_seat_changes, version_key
from bookings.models import Booking, BookingStatus
from flights.services import check_inventory
from tests.api.conftest import client_for
from tests.live import SeatMapListener

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


@pytest.fixture
def own_redis(settings):
    with ThrowawayRedis() as redis:
        # One plain Redis to restart, also in the run that puts every test on a cluster
        # (tests/cluster_run.py): the cluster's own primary loss is test_redis_cluster_failover.
        settings.CACHES = {
            "default": {
                **settings.CACHES["default"],
                "BACKEND": "django_redis.cache.RedisCache",
                "LOCATION": redis.url,
                "OPTIONS": {
                    "IGNORE_EXCEPTIONS": True,
                    "SOCKET_CONNECT_TIMEOUT": 1,
                    "SOCKET_TIMEOUT": 1,
                },
                "KEY_PREFIX": "faults",
            }
        }
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [redis.url]},
            }
        }
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"holds": "3/day", "payments": "99/min", "auth": "99/min"},
        }
        yield redis


def hold(api, flight, seat):
    return api.post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": [seat], "exitRowConfirmed": True},
        format="json",
    )


def after_reconnect(call):
    """The first command on a pooled connection to the dead server fails (and is swallowed by
    IGNORE_EXCEPTIONS); the pool reconnects for the next one."""
    result = call()
    return result if result is not None else call()


def test_an_empty_restart_loses_nothing_that_matters(own_redis, customer, other_customer, flight):
    from django.core.cache import cache

    api = client_for(customer)
    assert hold(api, flight, "12A").status_code == 201
    before = current_version(flight.pk)
    assert before > 1_000_000_000_000  # born at a millisecond epoch, not at 0
    seat_map = api.get(f"/api/flights/{flight.pk}/seats")
    assert seat_map.status_code == 200

    own_redis.restart_empty()
    assert after_reconnect(lambda: cache.get(version_key(flight.pk))) is None  # empty

    # Versions keep going up: an open page at `before` sees a jump and resyncs.
    version = after_reconnect(
        lambda: publish_seat_changes(sale_id=flight.sale_id, changes={"30F": "AVAILABLE"})
    )
    assert version > before
    listener = SeatMapListener(flight.pk)  # the channel layer works again
    try:
        assert hold(client_for(other_customer), flight, "14C").status_code == 201
        message = listener.next(timeout=5)
        assert message is not None and message["version"] > version
    finally:
        listener.close()

    # The cache refills from the database (12A and 14C held), throttles count again.
    seats = api.get(f"/api/flights/{flight.pk}/seats").json()
    held = {s["seatNo"] for s in seats["seats"] if s["status"] == "HELD"}
    assert {"12A", "14C"} <= held
    assert hold(api, flight, "15A").status_code == 201
    assert hold(api, flight, "15B").status_code == 201
    assert hold(api, flight, "15C").status_code == 201  # the count restarted with Redis...
    assert hold(api, flight, "15D").status_code == 429  # ...and is enforced again

    # Nobody holding lost their place.
    assert Booking.objects.filter(status=BookingStatus.HELD).count() == 5
    assert check_inventory(sale_id=flight.sale_id) == []


def test_control_a_counter_born_at_zero_would_go_backwards(own_redis, flight, monkeypatch):
    """Without the epoch, a reset counter restarts at 1 and an open page ignores every push
    until the count catches up with what it already saw."""
    monkeypatch.setattr("bookings.live._epoch", lambda: 0)
    for _ in range(5):
        publish_seat_changes(sale_id=flight.sale_id, changes={"30F": "AVAILABLE"})
    seen = current_version(flight.pk)
    own_redis.restart_empty()
    again = after_reconnect(
        lambda: publish_seat_changes(sale_id=flight.sale_id, changes={"30F": "AVAILABLE"})
    )
    assert again <= seen
