"""Emptying the test run's Celery queue before a real worker starts.

Tests that ran without a worker leave messages behind (they name rows that no longer exist),
and with them the relays' pending-kick flags (kernel.kicks): a flag whose kick was purged
would make the next commit send no kick, and its events would wait for a beat that tests do
not run.  So the queue and the flags go together."""

from __future__ import annotations

import redis

from kernel import kicks, outbox


def purge_queue() -> None:
    from config.celery import app

    with app.connection_for_write() as connection:
        connection.default_channel.queue_purge(app.conf.task_default_queue)
    redis.Redis.from_url(app.conf.broker_url).delete(
        kicks.pending_key(outbox.OUTBOX_RELAY), kicks.pending_key(outbox.EVENT_LOG_RELAY)
    )
