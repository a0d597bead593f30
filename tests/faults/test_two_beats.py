"""Two real beats started by mistake: only one sends.  Control: two plain DatabaseSchedulers
both send (every tick twice).  And when the sending beat dies, the standby takes over."""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
import redis as redis_lib

from bench.stack import ThrowawayRedis, app_env, start_beat, stop
from kernel.schedules import install_schedules
from tests.pgbouncer import database_env

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("two-beats"),  # one worker under xdist: single_beat_run runs once
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]

RELAY = "bookings.relay_outbox"


def relay_ticks_by_beat(client: redis_lib.Redis) -> Counter:
    """Relay messages waiting in the broker (no worker runs), by the beat process that sent
    them (Celery's `origin` header: gen<pid>@host)."""
    origins: Counter = Counter()
    for raw in client.lrange("celery", 0, -1):
        headers = json.loads(raw)["headers"]
        if headers["task"] == RELAY:
            origins[headers["origin"]] += 1
    return origins


def wait_for_ticks(client, count: int, timeout: float = 120) -> Counter:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ticks = relay_ticks_by_beat(client)
        if sum(ticks.values()) >= count:
            return ticks
        time.sleep(0.5)
    raise AssertionError(f"beat sent only {relay_ticks_by_beat(client)} within {timeout}s")


def run_two_beats(tmp_path: Path, scheduler: str, *, kill_the_sender: bool = False):
    install_schedules()
    with ThrowawayRedis() as own:
        route = database_env()  # through PgBouncer, as this module's own connections are
        env = app_env(route.pop("DATABASE_URL"), own.url, BEAT_LOCK_TTL_SECONDS="4", **route)
        client = redis_lib.Redis.from_url(own.url)
        beats = [start_beat(env, tmp_path / f"beat{i}.log", scheduler) for i in range(2)]
        try:
            wait_for_ticks(client, 3)  # both booted and ticking (or standing by)
            client.delete("celery")
            time.sleep(6)
            steady = relay_ticks_by_beat(client)
            if not kill_the_sender or len(steady) != 1:
                return steady, None
            (sender,) = steady
            pid = int(sender.split("@")[0].removeprefix("gen"))
            victim = next(b for b in beats if b.pid == pid)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            client.delete("celery")
            time.sleep(10)  # the lock's TTL (4 s) runs out; the standby takes over
            return steady, relay_ticks_by_beat(client)
        finally:
            for beat in beats:
                stop(beat)


@pytest.fixture(scope="module")
def single_beat_run(tmp_path_factory, django_db_setup, django_db_blocker):
    """Two SingleBeatSchedulers, once for the module: their steady state (one sends, the other
    stands by), then the sender SIGKILLed (the standby takes over).  Both tests below read this
    one run: starting two beats costs several seconds a time."""
    with django_db_blocker.unblock():
        return run_two_beats(
            tmp_path_factory.mktemp("beats"),
            "kernel.beat:SingleBeatScheduler",
            kill_the_sender=True,
        )


def test_a_second_beat_stands_by(single_beat_run):
    steady, _ = single_beat_run
    assert len(steady) == 1, steady  # one sender
    assert 3 <= sum(steady.values()) <= 8, steady  # the 1 s relay tick, once per second


def test_control_two_plain_database_schedulers_both_send(tmp_path):
    steady, _ = run_two_beats(tmp_path, "django_celery_beat.schedulers:DatabaseScheduler")
    assert len(steady) == 2, steady


def test_the_standby_takes_over_when_the_sender_dies(single_beat_run):
    steady, after = single_beat_run
    assert len(steady) == 1 and after is not None and len(after) == 1, (steady, after)
    assert set(after) != set(steady)
    assert sum(after.values()) >= 3, after
