"""A real ASGI server (uvicorn), a real Celery worker and headless Chromium against the test
database and Redis, for websocket and browser tests.

pytest-django's live server speaks WSGI only, so uvicorn runs `config.asgi:application` as a
subprocess with DATABASE_URL pointing at the test database.  Tests that use it must commit
their data (`django_db(transaction=True)`) for the server to see it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from django.db import connections
from playwright.sync_api import sync_playwright

from tests.pgbouncer import database_env

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


@dataclass
class AsgiServer:
    url: str
    host_port: str
    process: subprocess.Popen
    log: Path

    def ws_url(self, path: str) -> str:
        return f"ws://{self.host_port}{path}"


def _log_path(kind: str, name: str) -> Path:
    """test-artifacts/<kind>-<name>.log, with the xdist worker's id: two workers start
    servers of the same name at once."""
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return ARTIFACTS / (f"{kind}-{name}-{worker}.log" if worker else f"{kind}-{name}.log")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SERVER_START_SECONDS = 90


def start_asgi_server(name: str, port: int | str | None = None, **env: str) -> AsgiServer:
    port = port or _free_port()
    log = _log_path("uvicorn", name)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={**os.environ, **database_env(), "DJANGO_DEBUG": "false", **env},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = AsgiServer(f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", process, log)
    # A loaded CI machine (load average 17 seen) can take more than 30 s to import Django,
    # warm up and answer; the deadline is only how long a broken start takes to be reported.
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"uvicorn exited: {log.read_text()}")
        try:
            if httpx.get(server.url + "/", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    stop_asgi_server(server)
    raise RuntimeError(f"uvicorn did not answer within {SERVER_START_SECONDS} s: {log.read_text()}")


def stop_asgi_server(server: AsgiServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="session")
def asgi_server(django_db_setup) -> Iterator[AsgiServer]:
    """One server for the session, with the normal hold TTL.  Torn down before the test
    database is dropped (it depends on django_db_setup), so no connection is left open."""
    server = start_asgi_server("session")
    yield server
    stop_asgi_server(server)


# --- a real Celery worker ------------------------------------------------------------------


@dataclass
class CeleryWorker:
    name: str
    process: subprocess.Popen
    log: Path


def start_celery_worker(name: str, *, purge: bool = True, **env: str) -> CeleryWorker:
    """`celery -A config worker` as a subprocess on the test database and this run's Redis.
    Messages left in the queue by earlier tests (which ran without a worker) are purged first:
    they name rows that no longer exist.  A worker started in place of a dead one of the same
    test takes `purge=False`: what is queued is that test's own work, which a restarted worker
    must find (a purge there loses outbox kicks, and the events they stand for never relay)."""
    from config.celery import app

    assert app.conf.broker_url.startswith("redis://"), "a real worker needs the Redis broker"
    if purge:
        from tests.celery_queue import purge_queue

        purge_queue()
    log = _log_path("celery", name)
    node = f"pages-{name}-{os.getpid()}@localhost"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool",
            "solo",
            "--hostname",
            node,
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
        ],
        cwd=ROOT,
        env={**os.environ, **database_env(), **env},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    worker = CeleryWorker(node, process, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited: {log.read_text()}")
        if app.control.ping(destination=[node], timeout=1):
            return worker
    stop_celery_worker(worker)
    raise RuntimeError(f"celery worker not ready within 60 s: {log.read_text()}")


def stop_celery_worker(worker: CeleryWorker) -> None:
    worker.process.terminate()  # warm shutdown: the task under way finishes
    try:
        worker.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.process.kill()
        worker.process.wait()


@pytest.fixture
def celery_worker_process(asgi_server) -> Iterator[CeleryWorker]:
    """A worker that delivers the sandbox's webhooks to the test's uvicorn over HTTP, relays
    the outbox (tickets, e-mails) and sends refunds."""
    worker = start_celery_worker(
        "journey", SANDBOX_WEBHOOK_URL=asgi_server.url + "/api/payments/webhook"
    )
    yield worker
    stop_celery_worker(worker)


# --- headless Chromium ---------------------------------------------------------------------

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """Debian's Chromium (never a downloaded build); CHROMIUM_PATH overrides it."""
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def browser(transactional_db, monkeypatch):
    """Headless Chromium for one test.  Function-scoped and after the database fixture, so
    Playwright's event loop is gone again before pytest-django flushes the tables.

    Playwright's sync API marks an event loop as running in this thread from `start()` to
    `stop()`; Django then refuses every ORM call ("SynchronousOnlyOperation").  So every way
    out of here, a browser that does not start included, stops Playwright: a failing browser
    test must not take the database tests after it down.  A browser that cannot start fails
    the test with the reason; it is never skipped."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    executable = chromium_path()
    playwright = sync_playwright().start()
    try:
        try:
            chromium = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
        except Exception as exc:
            pytest.fail(
                f"Chromium did not start ({executable}): {exc}\n"
                "Install Debian's chromium (./scripts/test does so as root) or set CHROMIUM_PATH.",
                pytrace=False,
            )
        try:
            yield chromium
        finally:
            # Connections opened by the test body live in the context Playwright's loop
            # runs in; close them here, or they outlive the test database.
            connections.close_all()
            chromium.close()
    finally:
        playwright.stop()


def shot(page, name: str) -> None:
    """Screenshots for reviewers, in test-artifacts/ (not committed)."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
