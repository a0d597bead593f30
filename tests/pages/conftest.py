"""A real ASGI server (uvicorn) against the test database, for websocket and browser tests.

pytest-django's live server speaks WSGI only, so uvicorn runs `config.asgi:application` as a
subprocess with DATABASE_URL pointing at the test database.  Tests that use it must commit
their data (`django_db(transaction=True)`) for the server to see it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from django.db import connection

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _test_database_url() -> str:
    parts = urlsplit(os.environ["DATABASE_URL"])
    return parts._replace(path="/" + connection.settings_dict["NAME"]).geturl()


def start_asgi_server(name: str, port: int | str | None = None, **env: str) -> AsgiServer:
    port = port or _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"uvicorn-{name}.log"
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
        env={**os.environ, "DATABASE_URL": _test_database_url(), "DJANGO_DEBUG": "false", **env},
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = AsgiServer(f"http://127.0.0.1:{port}", f"127.0.0.1:{port}", process, log)
    deadline = time.monotonic() + 30
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
    raise RuntimeError(f"uvicorn did not answer within 30 s: {log.read_text()}")


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
