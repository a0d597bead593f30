"""Adaptive admission (issue 30, item 4; docs/architecture.md, "Adaptive admission"): in a
room in ADAPTIVE mode the admission rate follows the origin's health, like a congestion
window (AIMD), between the floor and the ceiling staff set.

The admission tick runs in a Celery worker, the holds in the web processes, so they share
one signal, named here:

* per sale, in Redis, the hash `<prefix>:health:<sale>`: `n` holds answered, `ms` their
  total time, `busy` of them refused as too busy (503: lock timeout, deadlock).  Every hold
  service adds to it through the engine's metric hook (`kernel.metrics.counts_holds` ->
  `note_hold`).  The process sums its holds and writes the sums at most once per
  `HEALTH_FLUSH_SECONDS` (a timer, one pipelined round trip for every sale it saw), not once
  per hold: a hold's own round trips are its filters' (issue 26).  The tick reads every
  ADAPTIVE_SECONDS, several flushes apart.  The write fails open: a Redis error costs the
  holds nothing and silences the writer for a few seconds (sums of that spell are dropped:
  health is a hint, not a record);
* PostgreSQL's own view of contention: backends of this database waiting for a lock
  (`pg_stat_activity.wait_event_type = 'Lock'`), read by the tick.

Once per ADAPTIVE_SECONDS the tick takes (reads and clears) the sale's hash and decides:
too-busy answers, an average hold slower than the room's target or more lock waiters than
ADAPTIVE_LOCK_WAITERS halve the rate (never below the floor); a healthy spell with holds
adds a tenth of the ceiling (never above it).  With no holds at all there is no evidence
either way, and the rate stays.  The rate itself is `admit_per_minute`, so the tick's rate
budget, the ETA and the staff panel need not know which mode set it.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection

from waitroom import queue
from waitroom.errors import WaitingRoomRequired
from waitroom.models import AdmissionMode, WaitingRoom

logger = logging.getLogger(__name__)

SIGNAL_TTL_SECONDS = 60  # an unprotected sale's hash lapses on its own
MUTE_SECONDS = 5  # after a Redis error the writer stays quiet this long
_muted_until = 0.0
# sale -> [holds, total ms, too busy], not yet written; guarded by _pending_lock.
_pending: dict[str, list[int]] = {}
_pending_lock = threading.Lock()
_flush_timer: threading.Timer | None = None


class Verdict:
    HEALTHY = "healthy"
    SLOW = "slow-holds"
    BUSY = "too-busy"
    LOCKS = "lock-waits"
    NO_EVIDENCE = "no-holds"


@dataclass(frozen=True)
class HoldSignal:
    holds: int = 0
    total_ms: int = 0
    too_busy: int = 0

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.holds if self.holds else 0.0


@dataclass(frozen=True)
class Adjustment:
    before: int
    after: int
    verdict: str
    signal: HoldSignal
    lock_waiters: int


def _signal_key(sale_id: int | str) -> str:
    return f"{settings.WAITING_ROOM['KEY_PREFIX']}:health:{sale_id}"


# --- the writer: the hold path, through kernel.metrics ---------------------------------------


def note_hold(name: str, amount: float, labels: dict[str, str]) -> None:
    """A `kernel.metrics` sink: add one answered hold (`amount` seconds) to its sale's
    signal, written with this process's other holds within `HEALTH_FLUSH_SECONDS`."""
    global _flush_timer
    sale = labels.get("sale")
    if name != "hold_seconds" or not sale or time.monotonic() < _muted_until:
        return
    if labels.get("reason") == WaitingRoomRequired.code:
        # Refused at the room's door (its check rides in the hold's first round trip, so it
        # is counted as a hold): it says nothing about the origin's pace.
        return
    busy = 1 if labels.get("reason") == "too-busy" else 0
    delay = settings.WAITING_ROOM.get("HEALTH_FLUSH_SECONDS", 0)
    with _pending_lock:
        sums = _pending.setdefault(sale, [0, 0, 0])
        sums[0] += 1
        sums[1] += int(amount * 1000)
        sums[2] += busy
        if delay > 0 and _flush_timer is None:
            _flush_timer = threading.Timer(delay, flush_hold_signals)
            _flush_timer.daemon = True
            _flush_timer.start()
    if delay <= 0:
        flush_hold_signals()


def flush_hold_signals() -> None:
    """Write this process's summed holds: one pipelined round trip; failing open."""
    global _muted_until, _flush_timer
    with _pending_lock:
        sums = dict(_pending)
        _pending.clear()
        timer, _flush_timer = _flush_timer, None
    if timer is not None and timer is not threading.current_thread():
        timer.cancel()  # written now: the armed timer has nothing left to write
    if not sums:
        return
    try:
        pipe = queue.client().pipeline(transaction=False)
        for sale, (holds, total_ms, too_busy) in sums.items():
            key = _signal_key(sale)
            pipe.hincrby(key, "n", holds)
            pipe.hincrby(key, "ms", total_ms)
            pipe.hincrby(key, "busy", too_busy)
            pipe.expire(key, SIGNAL_TTL_SECONDS)
        pipe.execute()
    except Exception:
        # Failing open: the holds have been answered already; health is a hint, not a record.
        _muted_until = time.monotonic() + MUTE_SECONDS
        logger.debug("origin health: hold signal not written", exc_info=True)


# --- the reader: the admission tick ----------------------------------------------------------


def take_hold_signal(*, sale_id: int) -> HoldSignal:
    """Read and clear the sale's hold signal in one MULTI; empty when Redis is down.  This
    process's own unwritten holds are written first (the tick's process has none; a test's
    does)."""
    flush_hold_signals()
    key = _signal_key(sale_id)
    try:
        pipe = queue.client().pipeline(transaction=True)
        pipe.hgetall(key)
        pipe.delete(key)
        raw, _ = pipe.execute()
    except Exception:
        logger.warning("origin health: hold signal unreadable", exc_info=True)
        return HoldSignal()
    values = {k.decode() if isinstance(k, bytes) else k: int(v) for k, v in raw.items()}
    return HoldSignal(
        holds=values.get("n", 0), total_ms=values.get("ms", 0), too_busy=values.get("busy", 0)
    )


def lock_waiters() -> int:
    """Backends of this database waiting for a lock now (PostgreSQL; 0 elsewhere)."""
    if connection.vendor != "postgresql":
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(cursor.fetchone()[0])


def judge(*, room: WaitingRoom, signal: HoldSignal, waiters: int) -> str:
    """The one rule: what the signal says about the origin."""
    if signal.too_busy:
        return Verdict.BUSY
    if waiters > settings.WAITING_ROOM["ADAPTIVE_LOCK_WAITERS"]:
        return Verdict.LOCKS
    if not signal.holds:
        return Verdict.NO_EVIDENCE
    if signal.mean_ms > room.adaptive_target_hold_ms:
        return Verdict.SLOW
    return Verdict.HEALTHY


def next_rate(*, room: WaitingRoom, verdict: str) -> int:
    floor, ceiling = room.adaptive_floor_per_minute, room.adaptive_ceiling_per_minute
    rate = room.admit_per_minute
    if verdict in (Verdict.BUSY, Verdict.LOCKS, Verdict.SLOW):
        rate = rate // 2  # multiplicative decrease: back off fast
    elif verdict == Verdict.HEALTHY:
        rate = rate + max(1, math.ceil(ceiling / 10))  # additive increase: probe slowly
    return min(max(rate, floor), ceiling)


def follow_origin(*, room: WaitingRoom, now: datetime) -> Adjustment | None:
    """Under the admission step's room lock: in adaptive mode, at most once per
    ADAPTIVE_SECONDS, set `admit_per_minute` by the origin's health.  The caller saves
    `admit_per_minute` and `adaptive_adjusted_at`.  None: not adaptive, or not yet."""
    if room.admission_mode != AdmissionMode.ADAPTIVE:
        return None
    period = timedelta(seconds=settings.WAITING_ROOM["ADAPTIVE_SECONDS"])
    if room.adaptive_adjusted_at is not None and now - room.adaptive_adjusted_at < period:
        return None
    signal = take_hold_signal(sale_id=room.sale_id)
    waiters = lock_waiters()
    verdict = judge(room=room, signal=signal, waiters=waiters)
    before = room.admit_per_minute
    room.admit_per_minute = next_rate(room=room, verdict=verdict)
    room.adaptive_adjusted_at = now
    if room.admit_per_minute != before:
        logger.info(
            "room %s: adaptive rate %s -> %s/min (%s, %d holds, %.0f ms, %d busy, %d waiters)",
            room.pk,
            before,
            room.admit_per_minute,
            verdict,
            signal.holds,
            signal.mean_ms,
            signal.too_busy,
            waiters,
        )
    return Adjustment(before, room.admit_per_minute, verdict, signal, waiters)
