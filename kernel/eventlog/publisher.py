"""The publisher interface the event-log relay talks to, and its NATS JetStream implementation.

A publisher appends messages to the log **in the order given, each acknowledged by the log
before the next is sent**: a later event of a booking must never be stored while an earlier
one might still fail (pipelining would let it), or a retry would store them out of order.  It
stops at the first failure and says how many were acknowledged; the relay marks exactly those.

A Kafka publisher is the same shape: `produce(topic, key=message.key, value=message.body,
headers=message.headers)` then `flush()` per message, on an idempotent producer with
`max.in.flight.requests.per.connection` ≤ 5 (docs/event-log.md).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

from kernel.eventlog.envelope import LogMessage
from kernel.eventlog.nats_client import LoopThread, connect, ensure_stream

logger = logging.getLogger(__name__)


@dataclass
class Published:
    acknowledged: int = 0  # the first `acknowledged` messages are in the log
    duplicates: int = 0  # of those, how many the log already had (same message id)
    error: Exception | None = None


class Publisher(Protocol):
    def publish(self, messages: Sequence[LogMessage]) -> Published: ...

    def close(self) -> None: ...


class JetStreamPublisher:
    """Publishes to one JetStream stream; connects (and creates the stream) on first use."""

    def __init__(
        self,
        *,
        url: str,
        stream: str,
        subject_prefix: str,
        duplicate_window_seconds: float,
        max_age_seconds: float,
        timeout_seconds: float,
    ) -> None:
        self.url, self.stream, self.prefix = url, stream, subject_prefix
        self.duplicate_window, self.max_age = duplicate_window_seconds, max_age_seconds
        self.timeout = timeout_seconds
        self._loop = LoopThread(name=f"event-log-publisher-{stream}")
        self._nc = None
        self._js = None

    async def _jetstream(self):
        if self._nc is None or self._nc.is_closed:
            self._nc = await connect(self.url, name="seatkeeper-event-log-relay")
            js = self._nc.jetstream(timeout=self.timeout)
            await ensure_stream(
                js,
                stream=self.stream,
                subjects=[f"{self.prefix}.>"],
                duplicate_window=self.duplicate_window,
                max_age=self.max_age,
            )
            self._js = js
        return self._js

    async def _publish(self, messages: Sequence[LogMessage]) -> Published:
        result = Published()
        try:
            js = await self._jetstream()
            for message in messages:
                ack = await js.publish(
                    message.subject,
                    message.body,
                    timeout=self.timeout,
                    stream=self.stream,
                    headers=message.headers,
                )
                result.acknowledged += 1
                result.duplicates += bool(ack.duplicate)
        except Exception as exc:  # the broker's errors, timeouts, a lost connection
            result.error = exc
        return result

    def publish(self, messages: Sequence[LogMessage]) -> Published:
        # Each message has its own timeout inside; this bound only guards the thread hand-off.
        bound = self.timeout * (len(messages) + 2) + 5
        return self._loop.run(self._publish(messages), timeout=bound)

    def close(self) -> None:
        async def _close() -> None:
            if self._nc is not None and not self._nc.is_closed:
                await self._nc.close()

        try:
            self._loop.run(_close(), timeout=5)
        finally:
            self._loop.stop()


_publishers: dict[tuple, Publisher] = {}


def get_publisher() -> Publisher:
    """This process's publisher for the configured log (a forked worker builds its own)."""
    config = settings.EVENT_LOG
    key = (os.getpid(), config["URL"], config["STREAM"], config["SUBJECT_PREFIX"])
    publisher = _publishers.get(key)
    if publisher is None:
        publisher = JetStreamPublisher(
            url=config["URL"],
            stream=config["STREAM"],
            subject_prefix=config["SUBJECT_PREFIX"],
            duplicate_window_seconds=config["DUPLICATE_WINDOW_SECONDS"],
            max_age_seconds=config["MAX_AGE_DAYS"] * 86400,
            timeout_seconds=config["PUBLISH_TIMEOUT_SECONDS"],
        )
        _publishers[key] = publisher
    return publisher


def close_publishers() -> None:
    for key in list(_publishers):
        publisher = _publishers.pop(key)
        if key[0] == os.getpid():
            publisher.close()
