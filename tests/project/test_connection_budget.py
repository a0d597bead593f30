"""N web processes plus the Celery worker and beat, under a burst, stay inside a known
connection budget far below max_connections (issue 12).

The real processes are started (uvicorn with 2 workers as in docker-compose.yml, a Celery
worker, beat) against the test database, and `pg_stat_activity` is sampled while 60 clients
hit them.  Both ways config/asgi.py can serve HTTP are checked: the default (WSGI on a fixed
thread pool, persistent connections) and Django's ASGI handler with the psycopg pool.  The
control starts the ASGI handler the old way (persistent connections, no pool) and shows that
the same burst then needs a connection per request thread.

The module counts what PostgreSQL sees from the processes' own connections, so it runs direct
(marker `direct`), even with every other test pooled: behind a shared pooler, the pool's
idle server connections from earlier tests would be reused and nothing would be counted.  The
last test puts the same stack behind a PgBouncer of its own: PostgreSQL then sees at most the
pool, however many client connections the processes keep.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import psycopg
import pytest
import requests
from django.conf import settings
from django.db import connection

from tests.pgbouncer import database_env, database_url

ROOT = Path(__file__).resolve().parents[2]
WEB_WORKERS = 2
PER_PROCESS = 3  # WEB_THREADS, or DB_POOL_MAX_SIZE
CELERY_CONCURRENCY = 2
CLIENTS, REQUESTS = 60, 600

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency, pytest.mark.direct]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(cmd: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def backends(name: str) -> set[int]:
    """The client ports of database `name`'s backends, less this pytest process's own:
    threads of earlier tests may open or close theirs at any moment (their ports, seen
    before and after the read)."""
    own = _own_ports()
    with psycopg.connect(database_url(), dbname="postgres", autocommit=True) as conn:
        ports = conn.execute(
            "SELECT client_port FROM pg_stat_activity WHERE datname = %s", [name]
        ).fetchall()
    own |= _own_ports()
    return {port for (port,) in ports if port not in own}


def _own_ports() -> set[int]:
    return {c.laddr.port for c in psutil.Process().net_connections(kind="tcp") if c.laddr}


def burst(base: str, name: str, baseline: set[int]) -> tuple[list[int], int]:
    """REQUESTS GETs of /readyz (it asks the database) from CLIENTS threads; (statuses, peak
    backends meanwhile that are not in `baseline`: the connections to the test database that
    were there before the stack started, such as the run's shared PgBouncer's idle server
    connections from earlier tests).  By port, not by count: one of those closing during the
    burst (PgBouncer's idle timeout) took a count below the baseline, and a pool of two
    measured 0 (the fresh-clone CI of 80632b0)."""
    peak, done = [0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], len(backends(name) - baseline))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    session = requests.Session()
    session.mount("http://", requests.adapters.HTTPAdapter(pool_maxsize=CLIENTS))
    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            statuses = list(
                pool.map(lambda _: session.get(f"{base}/readyz", timeout=60).status_code,
                         range(REQUESTS))
            )  # fmt: skip
        time.sleep(0.3)
    finally:
        done.set()
        sampler.join()
    return statuses, peak[0]


def wait_up(base: str, procs: list[subprocess.Popen], logdir: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            pytest.fail(f"a process died: {[p.read_text()[-2000:] for p in logdir.iterdir()]}")
        try:
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                time.sleep(2)  # every worker process up
                return
        except requests.RequestException:
            time.sleep(0.3)
    pytest.fail("the web server did not come up")


def stack_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **database_env(), **extra}
    for name in ("DB_POOL", "SEATKEEPER_HTTP", "WEB_THREADS", "DB_CONN_MAX_AGE"):
        if name not in extra:
            env.pop(name, None)
    return env


def web_cmd(port: int) -> list[str]:
    return [
        sys.executable, "-m", "uvicorn", "config.asgi:application", "--host", "127.0.0.1",
        "--port", str(port), "--workers", str(WEB_WORKERS), "--no-access-log",
    ]  # fmt: skip


MODES = {
    "wsgi-threads": {"WEB_THREADS": str(PER_PROCESS)},
    "asgi-pool": {"SEATKEEPER_HTTP": "asgi", "DB_POOL_MAX_SIZE": str(PER_PROCESS)},
}


@pytest.mark.parametrize("mode", MODES)
def test_web_processes_and_workers_stay_inside_the_connection_budget(tmp_path, mode):
    name = settings.DATABASES["default"]["NAME"]
    connection.close()  # our own connection is not part of the budget
    baseline = backends(name)
    port = free_port()
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    worker_env = stack_env(DB_CONN_MAX_AGE="60")
    procs = [
        start(web_cmd(port), stack_env(**MODES[mode]), tmp_path / "web.log"),
        start(
            [*celery, "worker", "--loglevel=WARNING", f"--concurrency={CELERY_CONCURRENCY}"],
            worker_env,
            tmp_path / "worker.log",
        ),
        start([*celery, "beat", "--loglevel=WARNING"], worker_env, tmp_path / "beat.log"),
    ]
    try:
        wait_up(f"http://127.0.0.1:{port}", procs, tmp_path)
        statuses, peak = burst(f"http://127.0.0.1:{port}", name, baseline)
    finally:
        stop(procs)
    # Each web process holds at most one connection per thread (or its pool); each Celery
    # process (the parent and its children) and beat at most one.
    budget = WEB_WORKERS * PER_PROCESS + (CELERY_CONCURRENCY + 1) + 1
    with psycopg.connect(database_url(), dbname="postgres") as conn:
        max_connections = int(conn.execute("SHOW max_connections").fetchone()[0])
    assert statuses == [200] * REQUESTS
    assert 1 <= peak <= budget < max_connections, (peak, budget)


def test_control_without_the_pool_every_request_thread_opens_its_own(tmp_path):
    name = settings.DATABASES["default"]["NAME"]
    connection.close()
    baseline = backends(name)
    port = free_port()
    env = stack_env(SEATKEEPER_HTTP="asgi", DB_POOL="0", DB_CONN_MAX_AGE="60")
    procs = [start(web_cmd(port), env, tmp_path / "web.log")]
    try:
        wait_up(f"http://127.0.0.1:{port}", procs, tmp_path)
        _, peak = burst(f"http://127.0.0.1:{port}", name, baseline)
    finally:
        stop(procs)
    assert peak > WEB_WORKERS * PER_PROCESS + CELERY_CONCURRENCY + 2, peak


POOL = 2  # server connections of the pooler in front: fewer than the stack's budget


def test_through_pgbouncer_postgresql_sees_only_the_pool(tmp_path):
    from tests.project.test_pgbouncer import run_tests

    name = settings.DATABASES["default"]["NAME"]
    connection.close()
    baseline = backends(name)
    port = free_port()
    with run_tests.private_pgbouncer(
        run_tests.pgbouncer_binary(), os.environ["DATABASE_URL"], pool_size=POOL
    ) as pooler:
        route = {"DATABASE_URL": pooler.rsplit("/", 1)[0] + f"/{name}", "DB_PGBOUNCER": "true"}
        celery = [sys.executable, "-m", "celery", "-A", "config"]
        worker_env = {**stack_env(DB_CONN_MAX_AGE="60"), **route}
        procs = [
            start(web_cmd(port), {**stack_env(**MODES["wsgi-threads"]), **route},
                  tmp_path / "web.log"),
            start([*celery, "worker", "--loglevel=WARNING",
                   f"--concurrency={CELERY_CONCURRENCY}"], worker_env, tmp_path / "worker.log"),
            start([*celery, "beat", "--loglevel=WARNING"], worker_env, tmp_path / "beat.log"),
        ]  # fmt: skip
        try:
            wait_up(f"http://127.0.0.1:{port}", procs, tmp_path)
            statuses, peak = burst(f"http://127.0.0.1:{port}", name, baseline)
        finally:
            stop(procs)
    budget = WEB_WORKERS * PER_PROCESS + (CELERY_CONCURRENCY + 1) + 1
    assert statuses == [200] * REQUESTS
    assert 1 <= peak <= POOL < budget, (peak, budget)
