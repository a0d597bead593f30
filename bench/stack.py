"""Throw-away servers for fault benches and tests: a PostgreSQL cluster of our own, a Redis of
our own, and the Seatkeeper processes (uvicorn, Celery worker, beat) pointed at them.

Never the shared servers: these listen on free 127.0.0.1 ports, live in a temporary
directory, and are stopped and deleted on exit, so restarting or killing them mid-sale hurts
nobody else.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PYTHON = sys.executable


def free_port() -> int:
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.closing(socket.socket()) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        args = ["runuser", "-u", "postgres", "--", *args]
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


class ThrowawayPostgres:
    """`initdb` into a temporary directory, `pg_ctl` on a free port; restartable at will."""

    def __init__(self, *, max_connections: int = 200) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="sk-pg-"))
        self.data = self.dir / "data"
        self.max_connections = max_connections
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/seatkeeper"

    def start(self) -> ThrowawayPostgres:
        _as_postgres(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "--no-sync",
            ]
        )
        self._pg_ctl("start")
        _as_postgres(
            [
                str(PG_BIN / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "seatkeeper",
            ]
        )
        return self

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} "
            f"-c max_connections={self.max_connections} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        _as_postgres(
            [
                str(PG_BIN / "pg_ctl"),
                action,
                "-D",
                str(self.data),
                "-w",
                "-t",
                "60",
                "-l",
                str(self.dir / "log"),
                "-o",
                options,
                *extra,
            ]
        )

    def restart(self) -> None:
        """What `pg_ctlcluster … restart` does: every backend gets "terminating connection
        due to administrator command", new ones "the database system is shutting down"."""
        self._pg_ctl("restart", "-m", "fast")

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> ThrowawayPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class ThrowawayRedis:
    """A Redis with no persistence on a free port: `restart_empty()` is a crash that loses
    everything (queues, counters, caches), as a restarted cache node does."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> ThrowawayRedis:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)
        return self

    def restart_empty(self) -> None:
        self.process.kill()
        self.process.wait()
        self.start()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> ThrowawayRedis:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# One set of throw-away secrets per run, shared by every process of the stack (web, worker and
# beat must agree on them), so the production start-up checks pass without DEBUG.
STACK_SECRETS = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
    "TICKET_SIGNING_KEY": secrets.token_urlsafe(48),
    "PARTNER_SECRETS_KEY": secrets.token_urlsafe(48),
    "SANDBOX_WEBHOOK_SECRET": secrets.token_urlsafe(48),
    # The simulated gateway on plain http://127.0.0.1, as a local demo would run it.
    "PAYMENTS_SANDBOX_IN_PRODUCTION": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "false",
    "DJANGO_SECURE_COOKIES": "false",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    "PARTNER_WEBHOOK_ALLOW_PRIVATE_URLS": "true",
}


def app_env(database_url: str, redis_url: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(STACK_SECRETS)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        CELERY_BROKER_URL=redis_url,
        API_THROTTLE_HOLDS="100000/min",
        API_THROTTLE_PAYMENTS="100000/min",
        API_THROTTLE_AUTH="100000/min",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PYTHON, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def spawn(env: dict[str, str], args: list[str], log: Path) -> subprocess.Popen:
    """A child in its own process group, so it and its children can be stopped together."""
    return subprocess.Popen(
        args,
        env=env,
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def start_web(env: dict[str, str], port: int, log: Path, workers: int = 2) -> subprocess.Popen:
    web = spawn(
        env,
        [
            PYTHON,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-access-log",
        ],
        log,
    )
    wait_for_port(port, timeout=120)
    return web


def start_worker(
    env: dict[str, str], log: Path, concurrency: int = 2, loglevel: str = "WARNING"
) -> subprocess.Popen:
    return spawn(
        env,
        [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            f"--loglevel={loglevel}",
            f"--concurrency={concurrency}",
            "--without-gossip",
            "--without-mingle",
        ],
        log,
    )


def wait_for_log(log: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise TimeoutError(f"{text!r} not in {log} after {timeout}s")


def start_beat(
    env: dict[str, str], log: Path, scheduler: str = "kernel.beat:SingleBeatScheduler"
) -> subprocess.Popen:
    return spawn(
        env,
        [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "--loglevel=WARNING",
            "--scheduler",
            scheduler,
            "--pidfile",
            "",
        ],
        log,
    )


def stop(process: subprocess.Popen | None, sig: int = signal.SIGTERM, timeout: float = 15) -> None:
    if process is None or process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
