"""Every multi-key script, MULTI and pipeline of a sale, room or user touches one slot.

A walk over each group of keys that one call sends together, checked twice: with redis-py's
`key_slot` and with the test cluster's own `CLUSTER KEYSLOT`.  The control shows the walk
can fail: the same keys without their hash tags (as the queue and seat map had them) land
in several slots, and the cluster refuses the queue's script on them (CROSSSLOT).
"""

from __future__ import annotations

import pytest
import redis
from django.core.cache import cache
from django.db import connection
from redis.crc import key_slot

from bookings import availability
from bookings.live import version_key
from config.api import tokens
from flights.selectors import seat_map_meta_key
from kernel import redis_clients
from kernel.web import throttles
from waitroom import queue

pytestmark = pytest.mark.django_db

SALE, ROOM, FLIGHT, EVENT = 41, 7, 1234, 99

QUEUE_NAMES = ("q", "pre", "built", "v", "state", "gone", "lanes", "powp:1.2.3", "pown:n")


def groups() -> dict[str, list[str]]:
    """Each group is what one Lua script / MULTI / pipeline sends together (full keys)."""
    gate = [availability.gate_key(SALE, s) for s in ("1A", "1B", "17F", "40K")]
    counters = [availability.counter_key(SALE, c) for c in ("ECONOMY", "ECONOMY/LAUNCH")]
    meta = seat_map_meta_key(sale_id=SALE, flight_id=FLIGHT)
    throttle = [
        cache.make_key(f"throttle:{scope}:{redis_clients.user_tag('user:5')}:{w}")
        for scope, w in (("holds", 1), ("payments", 1), ("holds", 2))
    ]
    token = "0123456789abcdef0123456789abcdef01234567"
    ident = redis_clients.token_ident(redis_clients.token_digest(token))
    token_check = [cache.make_key(tokens.token_cache_key(token))] + [
        cache.make_key(f"throttle:{scope}:{redis_clients.user_tag(ident)}:{w}")
        for scope, w in (("holds", 1), ("payments", 1))
    ]
    return {
        # the token check's pipeline: the token's cached user and its client's throttle
        # windows (issue 26: one round trip for the client, on one node)
        "token and its throttle windows": token_check,
        # GATE / UNGATE / release_seats: the seats of one hold, in one script or one DEL
        "seat gate": gate,
        # TAKE/SETTLE per counter, one hold's counters (booking class + its fare class) and
        # the rebuild claim next to them
        "availability counters": [*counters, f"{counters[0]}:rebuilding"],
        # the queue's MULTI snapshots, rebuild pipeline and _REMOVE_AND_BUMP script
        "queue and admission": [queue.key(ROOM, name) for name in QUEUE_NAMES],
        # flights' seat map: version, meta and body in one MGET
        "seat map version/meta/body": [
            cache.make_key(version_key(SALE)),
            cache.make_key(meta),
            cache.make_key(f"{meta}:body"),
            cache.make_key(f"{meta}:rebuilding"),
        ],
        # one client's throttle windows, every scope (one pipeline when batched)
        "throttle windows of one user": throttle,
    }


def slots(keys: list[str]) -> set[int]:
    return {key_slot(k.encode()) for k in keys}


@pytest.mark.parametrize("name", list(groups()))
def test_each_group_hashes_to_one_slot(name):
    keys = groups()[name]
    assert len(keys) >= 2
    assert len(slots(keys)) == 1, (name, {k: key_slot(k.encode()) for k in keys})


def test_the_cluster_agrees_with_redis_py_on_every_slot(redis_cluster):
    node = redis_cluster.client()
    try:
        for keys in groups().values():
            for k in keys:
                assert node.cluster_keyslot(k) == key_slot(k.encode()), k
    finally:
        node.close()


def test_different_sales_and_users_spread_over_the_primaries():
    """The tags are per sale / room / user, not one tag for everything."""
    assert len({key_slot(availability.gate_key(s, "1A").encode()) for s in range(1, 40)}) > 30
    assert len({key_slot(queue.key(r, "q").encode()) for r in range(1, 40)}) > 30
    assert key_slot(throttle_key("user:5").encode()) != key_slot(throttle_key("user:6").encode())


def throttle_key(ident: str) -> str:
    return f"throttle:holds:{redis_clients.user_tag(ident)}:1"


def test_the_hold_prefix_keeps_its_form():
    """The filters' keys had `{<sale_id>}` before the cluster: running holds keep theirs."""
    name = connection.settings_dict["NAME"]
    assert availability.gate_key(SALE, "1A") == f"hold:{name}:{{{SALE}}}:seat:1A"
    assert availability.counter_key(SALE, "ECONOMY") == f"hold:{name}:{{{SALE}}}:left:ECONOMY"


def test_the_throttle_key_carries_the_users_tag(rf, customer, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "holds": "100/min",
        },
    }
    seen: list[str] = []
    real = throttles.count_hit

    def spy(key, *, period):
        seen.append(key)
        return real(key, period=period)

    request = rf.post("/api/bookings")
    request.user = customer
    throttles.count_hit = spy
    try:
        assert throttles.HoldsThrottle().allow_request(request, None)
    finally:
        throttles.count_hit = real
    assert seen and f"{{user:{customer.pk}}}" in seen[0]


# --- the control: without the tags ----------------------------------------------------------


def untagged_queue_keys() -> list[str]:
    return [f"wr:{ROOM}:{name}" for name in ("q", "gone", "v")]  # the layout before the tags


def test_control_the_old_untagged_keys_span_several_slots():
    assert len(slots(untagged_queue_keys())) > 1
    # The token's key before issue 26 (no tag) and the user's throttle windows: two slots
    # for most users, so the token check was two round trips on the cluster.
    assert any(
        key_slot(f"sk:1:auth:token:{n:040x}".encode())
        != key_slot(cache.make_key(throttle_key(f"user:{n}")).encode())
        for n in range(1, 4)
    )
    assert len(slots([f"seatmap-version:{SALE}", f"flights:seatmap:v3:{FLIGHT}"])) > 1


def test_control_the_cluster_refuses_a_script_over_untagged_keys_and_runs_it_tagged(
    redis_cluster,
):
    client = redis_cluster.client()
    try:
        with pytest.raises((redis.ResponseError, redis.exceptions.RedisClusterException)):
            client.eval(queue._REMOVE_AND_BUMP, 3, *untagged_queue_keys())
        tagged = [queue.key(ROOM, name) for name in ("q", "gone", "v")]
        assert client.eval(queue._REMOVE_AND_BUMP, 3, *tagged) == [1]
    finally:
        client.delete(*[queue.key(ROOM, "v")])
        client.close()


def test_throttles_count_on_either_redis(redis_backend, customer):
    """The throttle's pipeline (INCR + EXPIRE of one window) on the run's Redis and on the
    cluster, where the cache's raw client is a RedisCluster."""
    from redis.cluster import RedisCluster

    key = f"throttle:holds:{redis_clients.user_tag(f'user:{customer.pk}')}:probe"
    assert [throttles.count_hit(key, period=60) for _ in range(3)] == [1, 2, 3]
    raw = throttles._redis_client()
    assert isinstance(raw, RedisCluster) == (redis_backend == "cluster")
    assert int(raw.get(cache.make_key(key))) == 3
