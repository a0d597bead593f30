"""NATS JetStream behind a synchronous face: the relay and consumers are Django code.

nats-py is asyncio; each client here owns one event loop on a daemon thread of its own and
runs coroutines on it, so Django's ORM never runs inside an event loop (Celery workers, the
management commands and the tests all call these from plain threads).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import nats
from nats.js.api import DiscardPolicy, RetentionPolicy, StorageType, StreamConfig
from nats.js.errors import NotFoundError

T = TypeVar("T")


class LoopThread:
    """An asyncio loop on its own daemon thread; `run` blocks until a coroutine finishes."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], *, timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


async def connect(url: str, *, name: str) -> nats.NATS:
    # A failed connect raises at once instead of retrying forever: the relay's next tick (or
    # the consumer's restart) tries again, and PostgreSQL keeps what was not published.
    return await nats.connect(
        servers=[url],
        name=name,
        connect_timeout=2,
        allow_reconnect=True,
        max_reconnect_attempts=3,
        reconnect_time_wait=0.5,
    )


async def ensure_stream(
    js: Any, *, stream: str, subjects: list[str], duplicate_window: float, max_age: float
) -> None:
    """Create the log's stream if it is missing (idempotent; an existing one is left as is)."""
    try:
        await js.stream_info(stream)
        return
    except NotFoundError:
        pass
    await js.add_stream(
        StreamConfig(
            name=stream,
            subjects=subjects,
            storage=StorageType.FILE,
            retention=RetentionPolicy.LIMITS,
            discard=DiscardPolicy.OLD,
            duplicate_window=duplicate_window,
            max_age=max_age,
        )
    )
