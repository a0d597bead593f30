"""The stack bench/waiting_room.py runs its sale against: uvicorn (`config.asgi`) and a Celery
worker with embedded beat on free ports, the scratch database and the bench's Redis db, with
the server settings a crowd from one address needs."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_wr"
)
BENCH_REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
# The Redis filters in front of the hold, as the server reads them (config/settings/engine.py).
FILTER_MODES = {
    "on": {"HOLD_SEAT_GATE": "true", "HOLD_AVAILABILITY_COUNTER": "true"},
    "off": {"HOLD_SEAT_GATE": "false", "HOLD_AVAILABILITY_COUNTER": "false"},
}
# The whole crowd comes from 127.0.0.1, and each customer holds a handful of times at most.
SERVER_ENV = {
    "WAITING_ROOM_JOINS_PER_ADDRESS": "1000000",
    "API_THROTTLE_HOLDS": "100000/min",
    "DJANGO_DEBUG": "false",
    # Plain HTTP on 127.0.0.1: without these, DEBUG off redirects every request to https.
    "DJANGO_SECURE_SSL_REDIRECT": "false",
    "DJANGO_SECURE_COOKIES": "false",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    "LOG_LEVEL": "WARNING",
    "SANDBOX_DELIVER_WEBHOOKS": "false",
    # Keep database connections: every websocket handshake reads the session and a snapshot
    # on the one thread channels runs ORM code on; a new connection per call costs ~50 ms.
    "DB_CONN_MAX_AGE": "300",
    # This machine is shared and busy: give Redis longer before answering 503.
    "WAITING_ROOM_REDIS_TIMEOUT_SECONDS": "5",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def ensure_database() -> None:
    import psycopg

    name = BENCH_URL.rsplit("/", 1)[1]
    with psycopg.connect(BENCH_URL, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def uvicorn(port: int, workers: int, env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def start_stack(
    port: int, workers: int, extra_env: dict[str, str], ws_port: int | None = None, ws_workers=0
) -> list[subprocess.Popen]:
    """uvicorn (HTTP, and websockets unless `ws_port`), a Celery worker with beat, and with
    `ws_port` a second uvicorn for the websockets alone (the shape where a proxy routes
    /ws/ to websocket workers: the queue sockets then never share a process with holds)."""
    env = {**os.environ, **SERVER_ENV, **extra_env}
    logs = ROOT / "test-artifacts"
    logs.mkdir(exist_ok=True)
    web = uvicorn(port, workers, env, logs / "bench-wr-uvicorn.log")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-B",
            "--pool",
            "threads",
            "--concurrency",
            "4",
            "--hostname",
            f"bench-wr-{os.getpid()}@localhost",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(logs / "bench-wr-celerybeat"),
        ],
        cwd=ROOT,
        env=env,
        stdout=(logs / "bench-wr-celery.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    import httpx

    processes = [web, worker]
    if ws_port:
        processes.append(uvicorn(ws_port, ws_workers, env, logs / "bench-wr-uvicorn-ws.log"))
    deadline = time.monotonic() + 60
    waiting = [port, ws_port] if ws_port else [port]
    while time.monotonic() < deadline and waiting:
        try:
            if httpx.get(f"http://127.0.0.1:{waiting[0]}/healthz", timeout=2).status_code < 500:
                waiting.pop(0)
                continue
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    if not waiting:
        return processes
    stop_stack(processes)
    raise SystemExit("uvicorn did not come up; see test-artifacts/bench-wr-uvicorn.log")


def stop_stack(processes: list[subprocess.Popen]) -> None:
    import psutil

    # uvicorn's workers are its children: killing a parent stuck in a graceful shutdown
    # left them running, orphaned, busy, in every later run (found 1 Dec: two of them took
    # 11-31 % of a core each during the next runs).  End them too.
    children = []
    for p in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            children += psutil.Process(p.pid).children(recursive=True)
    for p in processes:
        p.send_signal(signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    _gone, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()
