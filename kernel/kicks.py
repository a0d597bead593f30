"""Relay kicks, at most one pending per relay: a commit that finds one queued sends none.

A kick is a Celery message that says "relay now" (the outbox relay, the event-log relay),
published after a transaction that wrote outbox rows commits, so consumers run within
milliseconds instead of at beat's next one-second tick.  The kick was about a twelfth of a
pay request's Python (docs/performance.md, "Issue 26: one relay kick pending"), and a kick
queued behind another one does nothing the first will not do.

The rule, race-free because each side acts in this order:
  * a writer, after its commit, sets the relay's pending flag (SET NX, with a TTL, in the
    broker's Redis) and publishes only when it set it;
  * the relay task deletes the flag (`taken`) before it reads anything.
A writer that finds the flag set committed while the flag stood, so the relay that takes
the flag reads after that commit and sees its rows.  The outbox stays the truth: a kick
lost after its flag was set (a broker hiccup, an expired message) holds the flag at most
for its TTL, and beat's tick runs the same task every second, which takes the flag and
relays whatever is due.  The SET goes on the calling thread's own connection
(kernel.redis_own_connection: no retry, so a Redis hiccup means one extra kick, never a lost
one).  With Redis unreachable, or without a Redis broker (embedded mode,
eager tests), every commit publishes, as before.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import redis
from django.conf import settings

from kernel import redis_own_connection

logger = logging.getLogger(__name__)

_clients: dict[str, redis.Redis] = {}
_clients_lock = threading.Lock()


def pending_key(name: str) -> str:
    return f"seatkeeper:kick-pending:{name}"


def _broker(task: Any) -> redis.Redis | None:
    """The broker's Redis, or None when kicks are not queued there (eager, memory://)."""
    conf = task.app.conf
    url = conf.broker_url or ""
    if conf.task_always_eager or not url.startswith(("redis://", "rediss://")):
        return None
    client = _clients.get(url)
    if client is None:
        with _clients_lock:
            client = _clients.get(url)
            if client is None:
                # Short timeouts: the flag is an optimisation; a slow Redis means "publish".
                client = _clients[url] = redis.Redis.from_url(
                    url, socket_timeout=1, socket_connect_timeout=1
                )
    return client


def kick(task: Any, name: str, **options: Any) -> bool:
    """Publish `task` (`apply_async(**options)`) unless a kick of `name` is pending already.
    True when this call published.  Call after commit, never inside a transaction."""
    client = _broker(task)
    key = pending_key(name)
    if client is not None:
        ttl_ms = max(1, int(settings.OUTBOX["KICK_PENDING_SECONDS"] * 1000))
        try:
            if not redis_own_connection.set_if_absent(client, key, 1, px=ttl_ms):
                return False  # a queued kick will read after our commit
        except redis.RedisError:
            logger.warning("relay kick %s: Redis unreachable, publishing", name, exc_info=True)
            client = None
    try:
        task.apply_async(**options)
    except Exception:
        # Nothing was queued: a standing flag would only delay the next writer's kick.
        if client is not None:
            _delete(client, key)
        raise
    return True


def taken(task: Any, name: str) -> None:
    """The relay `name` is about to read: commits after this need a kick of their own.
    Called first thing by the relay task, beat's ticks and kicks alike."""
    client = _broker(task)
    if client is not None:
        _delete(client, pending_key(name))


def _delete(client: redis.Redis, key: str) -> None:
    try:
        client.delete(key)
    except redis.RedisError:  # the flag's TTL ends it
        logger.warning("relay kick flag %s not deleted: Redis unreachable", key, exc_info=True)
