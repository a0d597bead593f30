"""A web process writes its holds' health signal once per HEALTH_FLUSH_SECONDS, from a timer,
not once per hold (issue 26: a hold's round trips are its filters'); the control writes per
hold, as before."""

from __future__ import annotations

import time

import pytest
from redis.client import Pipeline
from redis.cluster import ClusterPipeline

from waitroom import origin_health, queue

pytestmark = pytest.mark.django_db

SALE = "987654"


def _keys(pipe) -> list[str]:
    # A server's pipeline stacks (args, options); a cluster's queues PipelineCommand objects
    # in its execution strategy.
    if isinstance(pipe, ClusterPipeline):
        return [str(c.args)[:200] for c in pipe._execution_strategy.command_queue]
    return [str(c[0])[:200] for c in pipe.command_stack]


@pytest.fixture
def signal(settings, room_redis, monkeypatch):
    """Pipelines that write the health hash, on one server or on the cluster alike."""
    writes: list[int] = []
    for kind in (Pipeline, ClusterPipeline):
        real = kind.execute

        def execute(pipe, *args, _real=real, **kwargs):
            if any("health" in key for key in _keys(pipe)):
                writes.append(1)
            return _real(pipe, *args, **kwargs)

        monkeypatch.setattr(kind, "execute", execute)
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
