"""Row locks in one global order, and lock trouble turned into a polite, retryable answer
(the pretix way).  The lock order itself is written down in docs/architecture.md ("Lock
order"); `lock_seats` is the one place that orders seat locks."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from django.conf import settings
from django.db import OperationalError, connections, transaction
from django.db.models import QuerySet

from kernel.errors import TooBusy

P = ParamSpec("P")
R = TypeVar("R")
log = logging.getLogger(__name__)

# Seats are locked by sale, then seat number (as text: "10A" < "9A"), by every path.
SEAT_LOCK_ORDER = ("sale_id", "seat_no")
# PostgreSQL's "deadlock detected" and "could not serialize access".
RETRYABLE_SQLSTATES = {"40P01", "40001"}


def lock_seats(seats: QuerySet, *, skip_locked: bool = False) -> QuerySet:
    """`seats` locked FOR UPDATE in the global seat order.  Evaluate it (list(), values_list)
    inside the transaction before updating any of those rows."""
    return seats.select_for_update(of=("self",), skip_locked=skip_locked).order_by(*SEAT_LOCK_ORDER)


def apply_lock_timeout(*, using: str = "default") -> None:
    """Make `DB_LOCK_TIMEOUT_MS` the `lock_timeout` of every new session of our role in our
    database (ALTER ROLE CURRENT_USER IN DATABASE ... SET; a role may set its own defaults).

    Not a startup option: PgBouncer refuses those, and with `ignore_startup_parameters` it
    would drop it silently, and with it the 503 too-busy answer.  Not a per-session SET
    either: through the pooler a session is not ours.  `migrate` runs this (kernel/apps.py),
    so every deploy writes the configured value; server connections opened afterwards have it
    (PgBouncer's existing ones once they are recycled: docs/operations.md, "PgBouncer")."""
    connection = connections[using]
    if connection.vendor != "postgresql":  # SQLite waits `timeout` seconds instead
        return
    milliseconds = int(settings.DB_LOCK_TIMEOUT_MS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        database = connection.ops.quote_name(cursor.fetchone()[0])
        cursor.execute(
            f"ALTER ROLE CURRENT_USER IN DATABASE {database} SET lock_timeout = '{milliseconds}ms'"
        )
    if not connection.in_atomic_block:
        # This session began before the setting: the next one (reconnected lazily) has it.
        connection.close()


def is_lock_timeout(exc: BaseException) -> bool:
    cause = exc.__cause__
    return type(cause).__name__ in {"LockNotAvailable", "QueryCanceled"} or (
        "database is locked" in str(exc)
    )


def is_retryable_conflict(exc: BaseException) -> bool:
    """A deadlock or serialization failure: PostgreSQL rolled our transaction back, and the
    same work can simply run again."""
    return getattr(exc.__cause__, "sqlstate", None) in RETRYABLE_SQLSTATES


def lock_errors_as_too_busy(func: Callable[P, R]) -> Callable[P, R]:
    """A lock wait past `lock_timeout` becomes TooBusy (503).  A deadlock or serialization
    failure is retried once when this call owns the transaction (nothing outside it was
    rolled back with it); if it happens again, or inside a caller's transaction, TooBusy."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        attempts = 1 if transaction.get_connection().in_atomic_block else 2
        for attempt in range(1, attempts + 1):
            try:
                return func(*args, **kwargs)
            except OperationalError as exc:
                if is_lock_timeout(exc):
                    raise TooBusy() from exc
                if not is_retryable_conflict(exc):
                    raise
                log.warning("%s: %s (attempt %d of %d)", func.__name__, exc, attempt, attempts)
                if attempt == attempts:
                    raise TooBusy() from exc
        raise AssertionError("unreachable")

    return wrapper
