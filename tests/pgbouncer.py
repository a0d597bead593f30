"""Tests through PgBouncer: which modules run through the run's pooler, and how they get there.

`./scripts/test` starts a PgBouncer in transaction mode in front of its PostgreSQL and names
it in SEATKEEPER_TEST_PGBOUNCER_URL.  The concurrency, fault and payment tests run through it
by default; with SEATKEEPER_POOLED_TESTS=all (`./scripts/test --pooled`, the nightly run)
every test does.  A module runs one way throughout: before its first test the connection
settings of the `default` alias are pointed at the pooler (the same dict every thread's
connection is made from, so threads and the live server follow), and back after its last.

The test database is created before that, on a direct connection, and dropped on one too,
after the pooler has been told to let go of its server connections to it (`KILL`).
Subprocesses (uvicorn, Celery) get the same route from `database_env()`.  Loaded as a plugin
(`-p tests.pgbouncer` in pyproject.toml), so its marking comes before `-m` selects.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from urllib.parse import unquote, urlsplit

import psycopg
import pytest
from django.db import connections

from config.database import through_pgbouncer

URL_VARIABLE = "SEATKEEPER_TEST_PGBOUNCER_URL"
POOLED_VARIABLE = "SEATKEEPER_POOLED_TESTS"
POOLED_DIRECTORIES = ("tests/faults/", "tests/payments/")
ROUTE_KEYS = ("HOST", "PORT", "USER", "PASSWORD", "OPTIONS", "DISABLE_SERVER_SIDE_CURSORS")


def pooler_url() -> str:
    url = os.environ.get(URL_VARIABLE)
    if not url:
        pytest.fail(
            f"this test runs through PgBouncer, and {URL_VARIABLE} is not set: run it with "
            "./scripts/test (which starts one) or point the variable at a PgBouncer in "
            "transaction mode in front of DATABASE_URL's server",
            pytrace=False,
        )
    return url


def every_test_pooled() -> bool:
    return os.environ.get(POOLED_VARIABLE) == "all" or os.environ.get("SEATKEEPER_NIGHTLY") == "1"


def runs_pooled(item: pytest.Item) -> bool:
    """The concurrency, fault and payment tests (and those marked `pgbouncer`)."""
    if item.get_closest_marker("direct"):
        return False
    if every_test_pooled():
        return True
    path = item.nodeid.split("::", 1)[0]
    return path.startswith(POOLED_DIRECTORIES) or any(
        item.get_closest_marker(name) for name in ("concurrency", "pgbouncer")
    )


POOLED_MODULES = pytest.StashKey[set]()


@pytest.hookimpl(tryfirst=True)  # before `-m` selects: `-m pgbouncer` runs the pooled tests
def pytest_collection_modifyitems(config, items):
    config.stash[POOLED_MODULES] = pooled_modules(items)


def pooled_modules(items: list[pytest.Item]) -> set[str]:
    """Modules with a pooled test run wholly pooled (a module runs one way); each such test
    carries the `pgbouncer` marker, so `-m pgbouncer` selects them."""
    modules = set()
    for item in items:
        if runs_pooled(item):
            modules.add(str(item.path))
    for item in items:
        if str(item.path) in modules and not item.get_closest_marker("pgbouncer"):
            item.add_marker("pgbouncer")
    return modules


def is_pooled() -> bool:
    return bool(connections["default"].settings_dict.get("DISABLE_SERVER_SIDE_CURSORS"))


@contextlib.contextmanager
def routed_through_pgbouncer(url: str | None = None) -> Iterator[None]:
    """Every new connection of the `default` alias goes through the pooler until the end."""
    settings_dict = connections["default"].settings_dict
    saved = {key: settings_dict.get(key) for key in ROUTE_KEYS}
    parts = urlsplit(url or pooler_url())
    connections.close_all()
    settings_dict.update(
        through_pgbouncer(
            {
                **settings_dict,
                "HOST": parts.hostname,
                "PORT": parts.port,
                "USER": unquote(parts.username or settings_dict["USER"]),
                "PASSWORD": unquote(parts.password or settings_dict["PASSWORD"] or ""),
            }
        )
    )
    try:
        yield
    finally:
        connections.close_all()
        for key, value in saved.items():
            if value is None:
                settings_dict.pop(key, None)
            else:
                settings_dict[key] = value


def database_url() -> str:
    """The test database's URL as this test reaches it (through the pooler when pooled)."""
    s = connections["default"].settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST']}:{s['PORT'] or 5432}/{s['NAME']}"


def database_env() -> dict[str, str]:
    """DATABASE_URL and DB_PGBOUNCER for a subprocess that must reach the test database the
    way this test does."""
    return {"DATABASE_URL": database_url(), "DB_PGBOUNCER": "true" if is_pooled() else "false"}


def admin_console(url: str | None = None) -> psycopg.Connection:
    """PgBouncer's admin console (the `pgbouncer` database): simple queries only."""
    parts = urlsplit(url or pooler_url())
    return psycopg.connect(
        host=parts.hostname,
        port=parts.port,
        user="postgres",
        dbname="pgbouncer",
        autocommit=True,
        prepare_threshold=None,
        cursor_factory=psycopg.ClientCursor,
    )


def release_database(name: str) -> None:
    """Close PgBouncer's server connections to `name` (so it can be dropped), then let new
    clients in again."""
    if not os.environ.get(URL_VARIABLE):
        return
    with admin_console() as console:
        databases = [row[0] for row in console.execute("SHOW DATABASES").fetchall()]
        if name in databases:
            console.execute(f"KILL {_plain_name(name)}")
            console.execute(f"RESUME {_plain_name(name)}")


def disconnect_clients(name: str) -> None:
    """What a failover or a pooler restart does to the clients: PgBouncer drops every client
    and server connection to `name` (`KILL`), then takes new clients again."""
    with admin_console() as console:
        console.execute(f"KILL {_plain_name(name)}")
        console.execute(f"RESUME {_plain_name(name)}")


def reconnect(name: str) -> None:
    """PgBouncer closes its server connections to `name` once each is released, so the next
    ones start with the role's current settings."""
    if not os.environ.get(URL_VARIABLE):
        return
    with admin_console() as console:
        console.execute(f"RECONNECT {_plain_name(name)}")


@contextlib.contextmanager
def lock_timeout_for_new_sessions(milliseconds: int) -> Iterator[None]:
    """New sessions (direct, or the pooler's fresh server connections) wait `milliseconds`
    for a lock (0: forever), as the role's setting has them in production; restored after.
    A session-level `SET lock_timeout` would reach one pooled server connection, not ours."""
    from django.test import override_settings

    from kernel.locking import apply_lock_timeout

    name = connections["default"].settings_dict["NAME"]
    try:
        with override_settings(DB_LOCK_TIMEOUT_MS=milliseconds):
            apply_lock_timeout()
        reconnect(name)
        yield
    finally:
        connections.close_all()
        apply_lock_timeout()
        reconnect(name)


def _plain_name(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a plain database name: {name!r}")
    return name
