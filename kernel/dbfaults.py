"""Telling "the database is not there right now" apart from a bug.

A PostgreSQL restart, an administrator's `pg_terminate_backend`, a failover or a full
connection table are not our mistakes and not the customer's: they are a short outage, and
the honest answer is 503 with `Retry-After` (the API's `service-unavailable` problem, the
pages' "back in a moment" page), never a 500.  `is_database_unavailable` is the one place
that decides which errors are such an outage; `discard_broken_connections` makes sure the next
request opens a fresh connection instead of reusing the dead one.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError, connections

logger = logging.getLogger(__name__)

# SQLSTATEs that mean "the server is going away, not there yet, or full" (PostgreSQL
# appendix A): class 08 connection exceptions, admin/crash shutdown, cannot connect now,
# too many connections, and a read-only transaction (we reached a standby after a failover).
UNAVAILABLE_SQLSTATES = {"57P01", "57P02", "57P03", "53300", "25006"}
# Text of errors that psycopg raises without a SQLSTATE (the connection itself failed).
UNAVAILABLE_MESSAGES = (
    "terminating connection due to administrator command",
    "the database system is shutting down",
    "the database system is starting up",
    "the database system is in recovery mode",
    "too many clients",
    "server closed the connection unexpectedly",
    "connection refused",
    "connection is closed",
    "connection already closed",
    "consuming input failed",
    "connection failed",
    "could not connect",
    "cannot execute",  # "... in a read-only transaction": a standby after failover
)


def is_database_unavailable(exc: BaseException) -> bool:
    """True when `exc` (Django's wrapper or the driver's error) means the database is down,
    restarting, failing over or full — a 503, not a bug."""
    driver_error = type(exc).__module__.startswith("psycopg")  # escaped Django's wrapper
    if not isinstance(exc, (OperationalError, InterfaceError)) and not driver_error:
        return False
    if isinstance(exc, InterfaceError) or type(exc).__name__ == "InterfaceError":
        return True
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    sqlstate = getattr(cause, "sqlstate", None)
    if sqlstate:
        return sqlstate.startswith("08") or sqlstate in UNAVAILABLE_SQLSTATES
    message = str(exc).lower()
    return any(text in message for text in UNAVAILABLE_MESSAGES)


def discard_broken_connections() -> None:
    """Close every connection this thread opened that is outside a transaction, so the next
    request connects afresh (a dead socket must never be handed to the next customer)."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:
            # Still inside a transaction (ATOMIC_REQUESTS, a test): Django's request_finished
            # handler closes it once the block has been left.
            conn.errors_occurred = True
            continue
        try:
            conn.close()
        except Exception:  # closing a dead socket may itself fail; it is gone either way
            logger.debug("closing a broken connection failed", exc_info=True)
