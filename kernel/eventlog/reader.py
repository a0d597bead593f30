"""The consumer side of the event log: a durable JetStream consumer, one message in flight.

A durable consumer is the server's stored offset (Kafka: a consumer group's committed
offset): a consumer that was away resumes after the last message it acknowledged.  With
`max_ack_pending=1` the server hands out the next message only after the previous one was
acknowledged, so a NAK'd or unacknowledged message is redelivered *before* anything after it:
every booking's events are applied in the order they were stored, redelivery or not.  (More
in flight would let a booking's later event overtake a redelivered earlier one; parallelism
comes from several consumers, each with its own filter subject, as Kafka's partitions.)
Delivery is at least once: a consumer dedupes on `LoggedEvent.event_id` in its own store.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import nats.errors
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError

from kernel.eventlog.envelope import LoggedEvent, read_message
from kernel.eventlog.nats_client import LoopThread, connect


@dataclass(frozen=True)
class Delivery:
    event: LoggedEvent
    stream_sequence: int  # the offset: position in the whole stream, from 1
    delivered_count: int  # 1 on first delivery, more on redelivery
    message: Any


class LogReader:
    def __init__(
        self,
        *,
        url: str,
        stream: str,
        durable: str,
        filter_subject: str,
        max_ack_pending: int = 1,
        ack_wait_seconds: float = 30.0,
        timeout_seconds: float = 5.0,
    ) -> None:
        self.url, self.stream, self.durable = url, stream, durable
        self.filter_subject = filter_subject
        self.max_ack_pending, self.ack_wait = max_ack_pending, ack_wait_seconds
        self.timeout = timeout_seconds
        self._loop = LoopThread(name=f"event-log-reader-{durable}")
        self._nc = None
        self._sub = None

    async def _subscription(self):
        if self._sub is None:
            self._nc = await connect(self.url, name=f"seatkeeper-event-log-{self.durable}")
            js = self._nc.jetstream(timeout=self.timeout)
            self._sub = await js.pull_subscribe(
                self.filter_subject,
                durable=self.durable,
                stream=self.stream,
                config=ConsumerConfig(
                    durable_name=self.durable,
                    deliver_policy=DeliverPolicy.ALL,  # a new consumer starts at offset 0
                    ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=self.ack_wait,
                    max_ack_pending=self.max_ack_pending,
                    filter_subject=self.filter_subject,
                ),
            )
        return self._sub

    async def _fetch(self, batch: int, wait: float) -> list[Delivery]:
        try:
            sub = await self._subscription()
        except NotFoundError:  # no stream yet: the relay creates it with its first event
            await asyncio.sleep(wait)
            return []
        try:
            messages = await sub.fetch(batch, timeout=wait)
        except (nats.errors.TimeoutError, TimeoutError):  # nothing came within `wait`
            return []
        return [
            Delivery(
                event=read_message(m.data),
                stream_sequence=m.metadata.sequence.stream,
                delivered_count=m.metadata.num_delivered,
                message=m,
            )
            for m in messages
        ]

    def fetch(self, *, batch: int = 10, wait: float = 1.0) -> list[Delivery]:
        """Up to `batch` messages, at most `max_ack_pending`; [] after `wait` s.

        Never asks for more than the server may hand out: a pull for 10 with one allowed in
        flight would return its one message only when the pull expires."""
        batch = max(1, min(batch, self.max_ack_pending))
        return self._loop.run(self._fetch(batch, wait), timeout=wait + self.timeout + 5)

    def ack(self, delivery: Delivery) -> None:
        # Synchronous: when this returns the server has moved the offset.
        self._loop.run(delivery.message.ack_sync(timeout=self.timeout), timeout=self.timeout + 5)

    def nak(self, delivery: Delivery, *, delay: float | None = None) -> None:
        self._loop.run(delivery.message.nak(delay=delay), timeout=self.timeout + 5)

    def close(self) -> None:
        """Drop the connection without acknowledging anything in hand (as a crash would)."""

        async def _close() -> None:
            if self._nc is not None and not self._nc.is_closed:
                await self._nc.close()

        if self._loop.loop.is_closed():
            return
        try:
            self._loop.run(_close(), timeout=10)
        finally:
            self._loop.stop()


def delete_durable(*, url: str, stream: str, durable: str) -> bool:
    """Forget a consumer's stored offset (a replay from offset 0 starts with this)."""

    async def _delete() -> bool:
        nc = await connect(url, name=f"seatkeeper-event-log-admin-{durable}")
        try:
            await nc.jetstream().delete_consumer(stream, durable)
            return True
        except NotFoundError:
            return False
        finally:
            await nc.close()

    loop = LoopThread(name="event-log-admin")
    try:
        return loop.run(_delete(), timeout=15)
    finally:
        loop.stop()
