"""A web process writes its holds' health signal once per HEALTH_FLUSH_SECONDS, from a timer,
not once per hold (issue 26: a hold's round trips are its filters'); the control writes per
hold, as before."""

from __future__ import annotations

import time

import pytest
from redis.client import Pipeline

from waitroom import origin_health, queue

pytestmark = pytest.mark.django_db

SALE = "987654"


@pytest.fixture
def signal(settings, room_redis, redis_backend, monkeypatch):
    if redis_backend == "cluster":
        pytest.skip("counts the single-server client's pipelines")
    writes: list[int] = []
    real = Pipeline.execute

    def execute(pipe, *args, **kwargs):
        if any("health" in str(c[0][1]) for c in pipe.command_stack):
            writes.append(1)
        return real(pipe, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "execute", execute)
    monkeypatch.setattr(origin_health, "_muted_until", 0.0)
    return writes


def raw_signal() -> dict:
    """The hash as the tick would find it, without flushing this process first."""
    raw = queue.client().hgetall(origin_health._signal_key(SALE))
    return {k.decode(): int(v) for k, v in raw.items()}


def note(reason: str = "") -> None:
    origin_health.note_hold("hold_seconds", 0.004, {"sale": SALE, "reason": reason})


def test_holds_are_summed_and_written_once_by_the_timer(settings, signal):
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "HEALTH_FLUSH_SECONDS": 0.2}
    note()
    note()
    note("too-busy")
    note("waiting-room-required")  # refused at the door: not the origin's pace
    assert signal == []  # nothing written yet
    deadline = time.monotonic() + 15
    while not raw_signal() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert raw_signal() == {"n": 3, "ms": 12, "busy": 1}
    assert signal == [1]


def test_control_without_batching_each_hold_is_a_write(settings, signal):
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "HEALTH_FLUSH_SECONDS": 0}
    for _ in range(3):
        note()
    assert raw_signal() == {"n": 3, "ms": 12, "busy": 0}
    assert signal == [1, 1, 1]
