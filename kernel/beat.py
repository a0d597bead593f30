"""One beat at a time, even when two are started by mistake.

`SingleBeatScheduler` is django-celery-beat's DatabaseScheduler behind a lock in Redis (the
broker beat publishes to anyway): a beat sends due tasks only while it holds
`seatkeeper:beat-lock`, a key with a TTL that the holder renews on every tick (at least every
`max_interval`, 5 s).  A second beat finds the key taken, sends nothing, and checks again each
tick; when the holder dies, its key expires after `BEAT_LOCK_TTL_SECONDS` and the standby
takes over.  A Redis restarted empty loses the key: the beats race for it again and one wins.

The periodic tasks are idempotent besides (SKIP LOCKED sweeps, conditional updates, outbox
receipts), so the lock is about not doubling the load, not about correctness.  Without a
Redis broker (embedded mode) there is only the one in-process beat and no lock.
"""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django_celery_beat.schedulers import DatabaseScheduler

logger = logging.getLogger(__name__)

LOCK_KEY = "seatkeeper:beat-lock"
# Extend the TTL only while the key is still ours (atomic compare-and-expire).
RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""


class BeatLock:
    def __init__(self, url: str, ttl_seconds: float) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self.token = uuid.uuid4().hex
        self.ttl_ms = int(ttl_seconds * 1000)
        self.held = False

    def acquire_or_renew(self) -> bool:
        try:
            if self.client.set(LOCK_KEY, self.token, nx=True, px=self.ttl_ms):
                won = True
            else:
                won = bool(self.client.eval(RENEW, 1, LOCK_KEY, self.token, self.ttl_ms))
        except Exception:
            # Redis (the broker) is unreachable: nothing could be sent anyway.  Stand by.
            logger.warning("beat lock: Redis unreachable; not sending", exc_info=True)
            won = False
        if won != self.held:
            logger.warning("beat lock %s (%s)", "acquired" if won else "lost", self.token[:8])
        self.held = won
        return won

    def release(self) -> None:
        try:
            self.client.eval(
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
                "end return 0",
                1,
                LOCK_KEY,
                self.token,
            )
        except Exception:
            logger.debug("beat lock release failed", exc_info=True)


def _lock_url() -> str | None:
    url = settings.CELERY_BROKER_URL
    return url if url.startswith(("redis://", "rediss://")) else None


class SingleBeatScheduler(DatabaseScheduler):
    def __init__(self, *args, **kwargs) -> None:
        url = _lock_url()
        self.beat_lock = BeatLock(url, settings.BEAT_LOCK_TTL_SECONDS) if url else None
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs) -> float:
        if self.beat_lock is not None and not self.beat_lock.acquire_or_renew():
            # Standby: check again well within the holder's TTL.
            return min(self.max_interval, settings.BEAT_LOCK_TTL_SECONDS / 3)
        return min(super().tick(*args, **kwargs), settings.BEAT_LOCK_TTL_SECONDS / 3)

    def close(self) -> None:
        super().close()
        if self.beat_lock is not None and self.beat_lock.held:
            self.beat_lock.release()
