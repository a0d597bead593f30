"""Reads that ride in the hold filters' round trip (issue 26: one Redis round trip per node).

A layer above the engine (the waiting room) must answer a question before a hold runs, from
keys on the same Redis (or Redis Cluster: one pipeline is then one round trip per node its
keys are on) as the filters: is this sale behind a room?  Rather than a round trip
of its own, it hands the engine a `Rider` for the request (`riding`): the keys to read and a
`judge` that decides from what was read, and may refuse (raise).  `hold_admission`
(bookings.availability) sends the keys with its first script, in one pipeline, and calls
the judge *before* it acts on the script's answer; if the judge refuses, whatever the
script took is given back, as for any refusal.

The judge is always called exactly once per `riding` block, before any hold can commit:

* with the values read, when the keys went with the filters' first script;
* with None ("read it yourself") when they could not: the filters are off or Redis is
  down, or no hold reached the filters (an idempotent replay, a request refused by
  validation first: then at the end of the block, and its refusal wins over the block's own
  error, as when it came first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Rider:
    keys: Sequence[str]  # full keys, on the hold filters' Redis
    judge: Callable[[list[bytes | None] | None], None]
    judged: bool = field(default=False)

    def decide(self, values: list[bytes | None] | None) -> None:
        self.judged = True
        self.judge(values)


_rider: ContextVar[Rider | None] = ContextVar("hold_filter_rider", default=None)


def pending() -> Rider | None:
    """The request's rider, while not judged yet."""
    rider = _rider.get()
    return rider if rider is not None and not rider.judged else None


@contextmanager
def riding(rider: Rider) -> Iterator[None]:
    token = _rider.set(rider)
    try:
        yield
    except BaseException:
        if not rider.judged:
            rider.decide(None)  # its refusal, if any, replaces the block's error
        raise
    finally:
        _rider.reset(token)
    if not rider.judged:
        rider.decide(None)
