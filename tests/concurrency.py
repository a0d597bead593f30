"""Run calls in many real threads at once, each thread with its own database connection."""

from __future__ import annotations

import queue
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, transaction


@dataclass
class Outcomes:
    results: list[Any] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)

    @property
    def error_kinds(self) -> Counter:
        return Counter(type(e).__name__ for e in self.errors)


def run_concurrently(
    calls: Sequence[Callable[[], Any]], *, threads: int | None = None, timeout: float = 180
) -> Outcomes:
    """Run `calls` on `threads` threads (default: one per call), all released by one barrier.

    Each thread connects before the barrier, so the calls really start together, as separate
    web workers would; with fewer threads than calls each thread works through a shared queue.
    """
    threads = min(threads or len(calls), len(calls))
    pending: queue.SimpleQueue = queue.SimpleQueue()
    for call in calls:
        pending.put(call)
    barrier = threading.Barrier(threads)
    outcomes = Outcomes()
    lock = threading.Lock()

    def worker() -> None:
        try:
            connections["default"].ensure_connection()
        except BaseException as exc:
            barrier.abort()
            with lock:
                outcomes.errors.append(exc)
            return
        try:
            barrier.wait(timeout=timeout)
            while True:
                try:
                    call = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    result = call()
                except Exception as exc:
                    with lock:
                        outcomes.errors.append(exc)
                else:
                    with lock:
                        outcomes.results.append(result)
        except threading.BrokenBarrierError as exc:
            with lock:
                outcomes.errors.append(exc)
        finally:
            connections.close_all()

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout)
    assert not any(t.is_alive() for t in pool), "a thread did not finish in time"
    return outcomes


@contextmanager
def locked_elsewhere(lock: Callable[[], Any]) -> Iterator[None]:
    """While the block runs, another thread's connection holds the row locks `lock` takes (a
    `select_for_update` read) in an open transaction; released, and the thread joined, after."""
    locked, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                lock()
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        yield
    finally:
        release.set()
        holder.join()
