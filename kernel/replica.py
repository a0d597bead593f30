"""Reads that may lag, from a PostgreSQL hot standby (docs/operations.md, "Read replica").

Nothing reads from the replica unless it asks to, inside one of two blocks:

- `reads_within_lag()`: search, admin lists, reports.  The replica is used while its lag is
  at most REPLICA["MAX_LAG_SECONDS"]; past that, or when it is down, the block reads from
  the primary.
- `reads_caught_up()`: a seat-map rebuild.  The caller has just read the sale's live version
  (Redis, bumped after each commit); the block reads the primary's WAL position *now* and uses
  the replica only if it has replayed at least that far.  Every change that produced that
  version is then in what the replica returns, so the map is cached under a version its seats
  contain, never a newer one.

Availability decisions, holds, payments and the waitlist never enter these blocks, and the
router sends every read inside a transaction of the primary to the primary anyway: pretix's
scaling guide warns that availability read from a replica oversells.

Lag is measured against the primary's WAL position, not by `pg_last_xact_replay_timestamp()`
alone (which reports lag whenever the primary is idle).  Each check reads the primary's
`pg_current_wal_insert_lsn()`; a replica that has replayed that far is 0 s behind, however
long nothing was written.  One that has not is as old as the newer of two marks: the last earlier
check whose primary position it has replayed, and the commit time of the last transaction it
replayed (both are upper bounds of its staleness; the second assumes the servers' clocks
agree, as NTP keeps them).  A replica that stops replaying while the primary writes falls
behind both and is dropped once they are older than the bound.  Checks are cached per
process for REPLICA["CHECK_SECONDS"]; a replica that cannot be reached is marked down for
the same time, so a dead one costs one connect attempt per interval, not one per request.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

ALIAS = "replica"
_route: contextvars.ContextVar[str | None] = contextvars.ContextVar("replica_route", default=None)


def configured() -> bool:
    return ALIAS in connections


def _bound() -> float:
    return float(settings.REPLICA["MAX_LAG_SECONDS"])


def _check_interval() -> float:
    return float(settings.REPLICA["CHECK_SECONDS"])


@dataclass
class _Health:
    checked_at: float = float("-inf")
    up: bool = False
    replay_lsn: int = 0
    lag: float = float("inf")


class _Tracker:
    """The primary's WAL positions over the last while, and the replica's state (per process)."""

    def __init__(self) -> None:
        self.samples: deque[tuple[float, int]] = deque(maxlen=256)  # (monotonic time, LSN)
        self.health = _Health()
        self.lock = threading.Lock()

    def reset(self) -> None:
        with self.lock:
            self.samples.clear()
            self.health = _Health()

    def lag_for(self, replay_lsn: int, now: float) -> float:
        """How old the replica's data may be: the time since the newest sample it holds."""
        held = [at for at, lsn in self.samples if lsn <= replay_lsn]
        if not held:
            return float("inf")  # it lacks even the oldest position we know of
        if held[-1] == self.samples[-1][0]:
            return 0.0  # it has everything the primary had at the last look
        return now - held[-1]


_tracker = _Tracker()


def reset() -> None:
    """Forget what was measured (tests; a new replica behind the same alias)."""
    _tracker.reset()
    if configured():
        connections[ALIAS].close()


def _lsn(text: str | None) -> int:
    if not text:
        return 0
    high, low = text.split("/")
    return (int(high, 16) << 32) + int(low, 16)


def primary_lsn() -> int:
    """Where the primary's WAL ends, including records not yet written out: a hold commits
    with synchronous_commit off, so its commit record may still be in WAL buffers, behind
    `pg_current_wal_lsn()` (the write position) but never behind the insert position."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text")
        return _lsn(cursor.fetchone()[0])


def _replica_state() -> tuple[int, float | None] | None:
    """(replayed LSN, seconds since its last replayed commit) of the standby; None when it
    cannot be reached (its connection is closed) or is no standby (promoted, or a primary)."""
    try:
        with connections[ALIAS].cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text,"
                " EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp())"
            )
            recovering, replayed, since_commit = cursor.fetchone()
    except DatabaseError:
        logger.warning("replica %r is unreachable: reading from the primary", ALIAS)
        connections[ALIAS].close()
        return None
    if not recovering:  # promoted, or not a standby at all: not ours to trust as one
        return None
    return _lsn(replayed), None if since_commit is None else float(since_commit)


def health(*, fresh: bool = False) -> _Health:
    """The replica's lag, measured at most every CHECK_SECONDS unless `fresh`."""
    now = time.monotonic()
    with _tracker.lock:
        if not fresh and now - _tracker.health.checked_at < _check_interval():
            return _tracker.health
        try:
            _tracker.samples.append((now, primary_lsn()))
        except DatabaseError:
            logger.warning("replica check: the primary did not answer", exc_info=True)
        state = _replica_state()
        if state is None:
            _tracker.health = _Health(checked_at=now)
            return _tracker.health
        replayed, since_commit = state
        lag = _tracker.lag_for(replayed, now)
        if lag > 0 and since_commit is not None:
            lag = min(lag, max(since_commit, 0.0))
        _tracker.health = _Health(checked_at=now, up=True, replay_lsn=replayed, lag=lag)
        return _tracker.health


def _usable_within_lag() -> bool:
    if not configured() or connections["default"].in_atomic_block:
        return False
    state = health()
    return state.up and state.lag <= _bound()


def _caught_up_with_primary() -> bool:
    """Whether the replica has replayed what the primary has now, waiting for it at most
    REPLICA["CATCH_UP_WAIT_SECONDS"] (a streaming replica is usually milliseconds behind)."""
    if not configured() or connections["default"].in_atomic_block:
        return False
    if not health().up:  # down or promoted at the last look: no connect attempt per rebuild
        return False
    try:
        wanted = primary_lsn()
    except DatabaseError:
        return False
    deadline = time.monotonic() + float(settings.REPLICA["CATCH_UP_WAIT_SECONDS"])
    while True:
        state = _replica_state()
        if state is None:
            return False
        if state[0] >= wanted:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


@contextlib.contextmanager
def _reading_from(alias: str) -> Iterator[str]:
    token = _route.set(alias)
    try:
        yield alias
    finally:
        _route.reset(token)


@contextlib.contextmanager
def reads_within_lag() -> Iterator[str]:
    """Reads in the block come from the replica if it lags by at most the bound; yields the
    alias used."""
    with _reading_from(ALIAS if _usable_within_lag() else "default") as alias:
        yield alias


@contextlib.contextmanager
def reads_caught_up() -> Iterator[str]:
    """Reads in the block come from the replica only if it holds everything the primary had
    committed when the block began; yields the alias used."""
    with _reading_from(ALIAS if _caught_up_with_primary() else "default") as alias:
        yield alias


class ReplicaRouter:
    """DATABASE_ROUTERS entry: reads go to the replica only inside the blocks above, and never
    while the primary's connection is inside a transaction; writes always go to the primary."""

    def db_for_read(self, model, **hints):
        alias = _route.get()
        if alias == ALIAS and not connections["default"].in_atomic_block:
            return ALIAS
        return "default"

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, two servers

    def allow_migrate(self, db, app_label, **hints):
        return db == "default"
