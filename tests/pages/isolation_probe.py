"""Run only by tests/pages/test_isolation.py, as a pytest run of its own (the name does not
match `test_*.py`, so the normal run does not collect it).

In order: browser tests that fail on purpose (a browser that cannot start, a step that
fails), plain database tests after each, a check that nothing was left behind, and a control
that leaks Playwright's event loop on purpose to show the leak is caught.  Every test uses
`transactional_db`, like the browser fixture: pytest-django runs `db` tests before
`transactional_db` tests, and this file's order is the point.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import sync_playwright

from flights.models import Flight
from tests.factories import FlightFactory

BASELINE: dict[str, set] = {}


def child_processes() -> set[int]:
    children = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        children |= {int(pid) for pid in (task / "children").read_text().split()}
    return children


def plain_database_work():
    assert asyncio._get_running_loop() is None
    flight = FlightFactory()
    assert Flight.objects.filter(pk=flight.pk).count() == 1


def test_baseline(transactional_db):
    BASELINE["threads"] = set(threading.enumerate())
    BASELINE["children"] = child_processes()


@pytest.fixture
def bogus_chromium(monkeypatch):
    monkeypatch.setenv("CHROMIUM_PATH", "/nonexistent/chromium")


def test_browser_that_cannot_start(bogus_chromium, browser):
    raise AssertionError("unreachable: the browser fixture must fail first")


def test_plain_database_test_after_a_browser_that_did_not_start(transactional_db):
    plain_database_work()


def test_browser_step_that_fails(browser):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    page = browser.new_page()
    page.goto(f"http://127.0.0.1:{closed_port}/")  # nothing listens there: the step fails


def test_plain_database_test_after_a_failed_browser_step(transactional_db):
    plain_database_work()


def other_sessions(*, settle_seconds: float) -> int:
    """Other sessions on this test database, once those closing have had `settle_seconds` to
    go.  A closed connection's backend leaves pg_stat_activity only when it has exited, a
    moment after its client hung up: on a loaded machine (CI of 0758cc5) one was still listed,
    most likely the live server's, closed at its teardown.  A connection left open stays listed."""
    deadline = time.monotonic() + settle_seconds
    while True:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            count = cursor.fetchone()[0]
        if count == 0 or time.monotonic() >= deadline:
            return count
        time.sleep(0.05)


def test_nothing_left_behind(transactional_db):
    assert asyncio._get_running_loop() is None
    assert set(threading.enumerate()) == BASELINE["threads"]
    assert child_processes() == BASELINE["children"]  # no Playwright driver, no Chromium
    assert other_sessions(settle_seconds=5) == 0


def test_control_a_connection_left_open_is_still_seen(transactional_db):
    left_open = connection.get_new_connection(connection.get_connection_params())
    try:
        assert other_sessions(settle_seconds=1) == 1
    finally:
        left_open.close()


def test_control_leaks_playwright_on_purpose(transactional_db):
    sync_playwright().start()  # never stopped: the loop stays marked as running


def test_plain_database_test_after_the_leak(transactional_db):
    plain_database_work()
