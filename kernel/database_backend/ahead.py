"""Database connections opened when a web process starts, for its HTTP threads' first connects.

Each HTTP thread keeps one persistent connection, opened by its first request that reads or
writes.  At the start of a sale all of a process's threads meet their first request at
once, under one GIL: the connects (a server process forked for each) and the new server
processes' first statements (the hold function compiled, the tables' catalogue entries
loaded) landed in the first customers' holds, 60-110 ms against 5-10 ms for the next ones,
and were the open loop's p99 at 50 % of capacity (docs/performance.md, "Issue 26: warm
connections").  `open_ahead` opens them at start instead, runs the callers' warm-up
statements on each (rolled back), and keeps them; `DatabaseWrapper.get_new_connection` hands
one to each thread that connects for the first time, and connects as before once none is
left.  A kept connection the server has ended meanwhile (a restart) is closed and skipped.

Only the raw driver connection is kept: the thread's own wrapper runs Django's usual set-up
on it (time zone, autocommit, `connection_created`), as on a connection it had just opened.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

# A warm-up step: runs on a freshly opened driver connection (psycopg), inside a transaction
# that is rolled back afterwards.
Warmer = Callable[[Any], None]

_lock = threading.Lock()
_kept: dict[str, list[tuple[Any, Any]]] = {}  # alias -> [(driver connection, isolation level)]
# The process that opened them: a child forked later (a server that imports the application
# before forking) must not share their sockets with its parent, so it takes none.
_owner = os.getpid()


def keep(alias: str, connection: Any, isolation_level: Any) -> None:
    global _owner
    with _lock:
        if _owner != os.getpid():
            _kept.clear()  # the parent's: dropped unclosed (closing would end the parent's)
            _owner = os.getpid()
        _kept.setdefault(alias, []).append((connection, isolation_level))


def take(alias: str, usable: Callable[[Any], bool]) -> tuple[Any, Any] | None:
    """A kept connection of `alias` that is still `usable`, or None (none left)."""
    while True:
        with _lock:
            stock = _kept.get(alias)
            if not stock or _owner != os.getpid():
                return None
            connection, level = stock.pop()
        if not connection.closed and usable(connection):
            return connection, level
        with contextlib.suppress(Exception):
            connection.close()


def kept(alias: str) -> int:
    with _lock:
        return len(_kept.get(alias, ()))


def close_all() -> None:
    """Close and forget every kept connection (tests; a process that stops serving)."""
    with _lock:
        stocks = list(_kept.values())
        _kept.clear()
    for stock in stocks:
        for connection, _ in stock:
            with contextlib.suppress(Exception):
                connection.close()


def warm(connection: Any, warmers: list[Warmer]) -> None:
    """Run each warmer on `connection`, then roll back whatever they did.  A warmer that
    fails (a table a migration has not created yet) costs its own warmth, nothing else."""
    for warmer in warmers:
        try:
            warmer(connection)
        except Exception:
            logger.warning("connection warm-up step %s failed", warmer, exc_info=True)
        finally:
            connection.rollback()
