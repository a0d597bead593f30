"""The throw-away servers a test run starts beside its PostgreSQL cluster (scripts/run_tests.py,
which re-exports these names): a PgBouncer in transaction mode in front of it, a Redis that
keeps nothing on disk, and the process helpers they share with the cluster (a free port, a
port that answers, a process stopped for sure, PostgreSQL's programs run as its own user)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# --- processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if it has not gone within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def port_open(host: str, port: int) -> bool:
    with contextlib.closing(socket.socket()) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root: as root, run its programs as the `postgres` user."""
    if os.geteuid() != 0:
        return []
    import pwd

    try:
        pwd.getpwnam("postgres")
    except KeyError:
        sys.exit(
            "Running as root, and PostgreSQL refuses to: create a `postgres` user "
            "(apt-get install postgresql does) or run ./scripts/test as a normal user."
        )
    return ["runuser", "-u", "postgres", "--"]


# --- PgBouncer -----------------------------------------------------------------------------

# Room for two xdist workers' concurrency tests (200+ clients each) and their subprocesses.
PGBOUNCER_MAX_CLIENTS = 1000
# Server connections per (database, user): a concurrency test's threads may all sit in open
# transactions at once (lock waits), so the pool must not be what they queue for.
PGBOUNCER_POOL_SIZE = 150


def pgbouncer_ini(
    *, directory: Path, port: int, server_host: str, server_port: int, pool_size: int
) -> str:
    """The test pooler's configuration: transaction mode as in docker-compose.yml, clients
    trusted on loopback (the server checks the password, kept in the auth file), and no
    `ignore_startup_parameters`, so a startup `options` is refused as in production."""
    return (
        "[databases]\n"
        f"* = host={server_host} port={server_port}\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {port}\n"
        "unix_socket_dir =\n"
        "pool_mode = transaction\n"
        "auth_type = trust\n"
        f"auth_file = {directory / 'userlist.txt'}\n"
        f"max_client_conn = {PGBOUNCER_MAX_CLIENTS}\n"
        f"default_pool_size = {pool_size}\n"
        "max_db_connections = 0\n"
        "admin_users = postgres\n"
        f"logfile = {directory / 'pgbouncer.log'}\n"
        f"pidfile = {directory / 'pgbouncer.pid'}\n"
    )


@contextlib.contextmanager
def private_pgbouncer(
    binary: str, database_url: str, *, pool_size: int = PGBOUNCER_POOL_SIZE
) -> Iterator[str]:
    """A throw-away PgBouncer in transaction mode in front of `database_url`'s server, run as
    the private cluster's user (PgBouncer refuses to run as root); yields its URL."""
    from urllib.parse import unquote, urlsplit

    server = urlsplit(database_url)
    user, password = unquote(server.username or "postgres"), unquote(server.password or "")
    as_user = _as_postgres_user()
    tmp = Path(tempfile.mkdtemp(prefix="seatkeeper-pgbouncer-"))
    process = None
    try:
        port = free_port()
        admin = "" if user == "postgres" else '"postgres" ""\n'  # the admin console's user
        (tmp / "userlist.txt").write_text(f'"{user}" "{password}"\n{admin}')
        (tmp / "pgbouncer.ini").write_text(
            pgbouncer_ini(
                directory=tmp,
                port=port,
                server_host=server.hostname or "127.0.0.1",
                server_port=server.port or 5432,
                pool_size=pool_size,
            )
        )
        if as_user:
            for path in (tmp, *tmp.iterdir()):
                shutil.chown(path, user="postgres", group="postgres")
            (tmp / "userlist.txt").chmod(0o600)
        process = subprocess.Popen(
            [*as_user, binary, "-q", str(tmp / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=(tmp / "stderr.log").open("w"),
            start_new_session=True,  # Ctrl-C reaches pytest; we stop this one after it
        )
        deadline = time.monotonic() + 20
        while not port_open("127.0.0.1", port):
            if process.poll() is not None or time.monotonic() > deadline:
                logs = [(tmp / n) for n in ("stderr.log", "pgbouncer.log")]
                sys.exit(
                    "Could not start a private PgBouncer:\n"
                    + "".join(p.read_text() for p in logs if p.exists())
                )
            time.sleep(0.05)
        print(
            f"PgBouncer: private pooler on 127.0.0.1:{port} (transaction mode, pool "
            f"{pool_size}) in front of {server.hostname}:{server.port}",
            file=sys.stderr,
            flush=True,
        )
        yield server._replace(netloc=f"{server.username or 'postgres'}@127.0.0.1:{port}").geturl()
    finally:
        if process is not None:
            # runuser passes SIGTERM on; PgBouncer's SIGTERM is "shut down now".
            stop_process(process)
        shutil.rmtree(tmp, ignore_errors=True)


def pgbouncer_binary() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer",) if Path(p).is_file()), None
    )


# --- Redis ---------------------------------------------------------------------------------


NO_DISK = ("--save", "", "--appendonly", "no")


@contextlib.contextmanager
def private_redis(binary: str) -> Iterator[str]:
    tmp = Path(tempfile.mkdtemp(prefix="seatkeeper-redis-"))
    process = None
    try:
        port = free_port()
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp), *NO_DISK],
            stdout=(tmp / "redis.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches pytest; we stop this one after it
        )
        deadline = time.monotonic() + 20
        while not port_open("127.0.0.1", port):
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"Could not start a private Redis:\n{(tmp / 'redis.log').read_text()}")
            time.sleep(0.05)
        print(f"Redis: private server on 127.0.0.1:{port}", file=sys.stderr, flush=True)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if process is not None:
            stop_process(process)
        shutil.rmtree(tmp, ignore_errors=True)
