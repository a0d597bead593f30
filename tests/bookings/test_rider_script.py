"""On one Redis, the rider's reads and the hold filters' first script are one EVALSHA
(issue 26), not a pipeline of a GET per rider key and an EVAL: the same values reach the
judge and the same answer reaches the caller as the script alone gives, for every answer of
TAKE and GATE; a Redis that lost its scripts still answers.  The control: a wrapper that
reads the wrong key is caught."""

from __future__ import annotations

import pytest

from bookings import admission_reads, availability
from bookings import availability_scripts as scripts
from tests.redis_wire import record_sent_commands, unknown_to_redis

pytestmark = pytest.mark.django_db

SALE = 77


@pytest.fixture
def one_redis(settings):
    from tests import cluster_run

    if cluster_run.WHOLE_RUN_CLUSTER is not None:
        pytest.skip("one Redis's path; the cluster keeps the pipeline")
    settings.HOLD_FILTERS = {
        **settings.HOLD_FILTERS,
        "REDIS_URL": settings.REDIS_URL,
        "REDIS_CLUSTER": False,
        "SEAT_GATE": True,
        "AVAILABILITY_COUNTER": True,
    }
    availability._down_until = 0.0
    yield availability._client()
    availability._down_until = 0.0


def ride(script, keys, args):
    """`_run_with_rider` with a rider on two keys (one set, one missing): (values, answer)."""
    judged = []
    rider = admission_reads.Rider(keys=["rider:set", "rider:missing"], judge=judged.append)
    with admission_reads.riding(rider):
        answer = availability._run_with_rider(script, keys, args, undo=lambda _: None)
    return judged, answer


def states(client):
    counter = availability.counter_key(SALE, "ECONOMY")
    gates = [availability.gate_key(SALE, s) for s in ("1A", "1B")]

    def counter_with(n, pending=0):
        client.delete(counter)
        if n is not None:
            client.hset(counter, mapping={"n": n, "at": 123, "pending": pending})

    def gates_with(*taken):
        client.delete(*gates)
        for key in taken:
            client.set(key, "other")

    yield "taken", lambda: counter_with(3), scripts.TAKE, [counter], [2]
    yield "short", lambda: counter_with(1, pending=1), scripts.TAKE, [counter], [2]
    yield "missing", lambda: counter_with(None), scripts.TAKE, [counter], [2]
    yield "gate open", lambda: gates_with(), scripts.GATE, gates, ["tok", 5000]
    yield "gate shut", lambda: gates_with(gates[1]), scripts.GATE, gates, ["tok", 5000]


def test_one_command_gives_the_judge_and_the_caller_what_the_pipeline_did(one_redis, monkeypatch):
    client = one_redis
    client.set("rider:set", b"\x80value")
    client.delete("rider:missing")
    sent = record_sent_commands(monkeypatch)
    for name, arrange, script, keys, args in states(client):
        arrange()
        ride(script, keys, args)  # the script known to Redis
        arrange()
        sent.clear()
        judged, answer = ride(script, keys, args)
        assert sent == ["EVALSHA"], name
        assert judged == [[b"\x80value", None]], name
        after = client.dump(keys[0]), client.dump(keys[-1])
        arrange()
        assert answer == client.eval(script, len(keys), *keys, *args), name
        assert (client.dump(keys[0]), client.dump(keys[-1])) == after, name


def test_a_redis_without_the_script_still_answers(one_redis, monkeypatch):
    real = scripts.riding
    monkeypatch.setattr(scripts, "riding", lambda script: unknown_to_redis(real(script)[0]))
    one_redis.set("rider:set", b"v")
    counter = availability.counter_key(SALE, "ECONOMY")
    one_redis.hset(counter, mapping={"n": 0, "at": 5, "pending": 0})
    sent = record_sent_commands(monkeypatch)
    assert ride(scripts.TAKE, [counter], [1]) == ([[b"v", None]], [0, 5, 0])
    assert sent == ["EVALSHA", "EVAL"]  # NOSCRIPT, then the text


def test_control_a_wrapper_reading_the_wrong_key_is_caught(one_redis, monkeypatch):
    real = scripts.riding

    def broken(script):
        text, _sha = real(script)
        wrong = text.replace("redis.call('GET', KEYS[i])", "redis.call('GET', KEYS[1])")
        assert wrong != text
        return wrong, "0" * 40  # NOSCRIPT: the broken text runs

    monkeypatch.setattr(scripts, "riding", broken)
    one_redis.set("rider:set", b"v")
    judged, _ = ride(scripts.TAKE, [availability.counter_key(SALE, "ECONOMY")], [1])
    assert judged != [[b"v", None]]
