"""The token check's round trip is one EVALSHA (issue 26): the cached user's GET and each
throttle window's INCR + EXPIRE in one script, on the run's Redis and on the cluster (the
keys share the token's tag).  It answers what the pipeline it replaced answered: the raw
entry (None when missing), the counts, each window's expiry; a Redis that lost its scripts
still answers; a Redis that is gone fails open.  The control: a script that skips the
expiry is caught."""

from __future__ import annotations

import pytest
import redis
from django.core.cache import cache
from redis.crc import key_slot

from config.api import tokens
from kernel import redis_clients
from kernel.web import throttles
from tests.redis_wire import record_sent_commands, unknown_to_redis

pytestmark = pytest.mark.django_db


def keys_of(token: str) -> tuple[str, list[tuple[str, int]]]:
    ident = redis_clients.token_ident(redis_clients.token_digest(token))
    hits = [
        (throttles.HoldsThrottle().window_key(ident, period=60, now=1000.0), 60),
        (f"throttle:other:{redis_clients.user_tag(ident)}:7", 3600),
    ]
    return cache.make_key(tokens.token_cache_key(token)), hits


def test_one_command_reads_the_user_and_counts_each_window(redis_backend, monkeypatch):
    get_key, hits = keys_of("a" * 40)
    assert len({key_slot(k.encode()) for k in [get_key, *map(cache.make_key, dict(hits))]}) == 1
    raw = throttles._redis_client()
    throttles.count_hits_with_get(*keys_of("e" * 40))  # the script known to Redis
    sent = record_sent_commands(monkeypatch)
    assert throttles.count_hits_with_get(get_key, hits) == (None, {hits[0][0]: 1, hits[1][0]: 1})
    assert sent == ["EVALSHA"]
    raw.set(get_key, b"\x80entry")
    assert throttles.count_hits_with_get(get_key, hits) == (
        b"\x80entry",
        {hits[0][0]: 2, hits[1][0]: 2},
    )
    assert [
        raw.ttl(cache.make_key(key)) in (ttl, ttl - 1)
        for key, ttl in ((hits[0][0], 61), (hits[1][0], 3601))
    ] == [True, True]


def test_a_redis_without_the_script_still_answers(redis_backend, monkeypatch):
    get_key, hits = keys_of("b" * 40)
    lost, lost_sha = unknown_to_redis(throttles._GET_AND_COUNT)
    monkeypatch.setattr(throttles, "_GET_AND_COUNT", lost)
    monkeypatch.setattr(throttles, "_GET_AND_COUNT_SHA", lost_sha)
    assert throttles._redis_client().script_exists(lost_sha) == [False]
    sent = record_sent_commands(monkeypatch)
    assert throttles.count_hits_with_get(get_key, hits)[1] == {hits[0][0]: 1, hits[1][0]: 1}
    assert throttles.count_hits_with_get(get_key, hits)[1] == {hits[0][0]: 2, hits[1][0]: 2}
    assert sent == ["EVALSHA", "EVAL", "EVALSHA"]  # NOSCRIPT, the text, then known


def test_a_redis_that_is_gone_fails_open(monkeypatch):
    get_key, hits = keys_of("c" * 40)
    gone = redis.Redis(port=1, socket_connect_timeout=0.2)
    monkeypatch.setattr(throttles, "_redis_client", lambda backend=None: gone)
    assert throttles.count_hits_with_get(get_key, hits) == (None, {key: None for key, _ in hits})


def test_control_a_script_without_the_expiry_is_caught(monkeypatch):
    get_key, hits = keys_of("d" * 40)
    script = throttles._GET_AND_COUNT.replace("redis.call('EXPIRE', KEYS[i], ARGV[i - 1])", "")
    assert script != throttles._GET_AND_COUNT
    monkeypatch.setattr(throttles, "_GET_AND_COUNT", script)
    monkeypatch.setattr(throttles, "_GET_AND_COUNT_SHA", "0" * 40)  # NOSCRIPT: EVAL runs it
    throttles.count_hits_with_get(get_key, hits)
    raw = throttles._redis_client()
    assert [raw.ttl(cache.make_key(key)) for key, _ in hits] == [-1, -1]
