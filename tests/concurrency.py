"""Run a function in many real threads at once, each with its own database connection."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import connections


@dataclass
class Outcomes:
    results: list[Any] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    @property
    def error_kinds(self) -> Counter:
        return Counter(type(e).__name__ for e in self.errors)


def run_concurrently(calls: Sequence[Callable[[], Any]], *, timeout: float = 120) -> Outcomes:
    """Start every call on its own thread, release them together with a barrier, wait for all.

    Each thread opens (and finally closes) its own connection, as a separate web worker would.
    """
    barrier = threading.Barrier(len(calls))
    outcomes = Outcomes()
    lock = threading.Lock()

    def worker(call: Callable[[], Any]) -> None:
        try:
            connections["default"].ensure_connection()
            barrier.wait(timeout=timeout)
            result = call()
            with lock:
                outcomes.results.append(result)
        except BaseException as exc:
            with lock:
                outcomes.errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(c,), daemon=True) for c in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish in time"
    return outcomes
