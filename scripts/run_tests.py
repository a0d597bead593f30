"""Find real PostgreSQL and Redis for the test suite, then run pytest.

Order: DATABASE_URL / REDIS_URL from the environment; else the local servers on
127.0.0.1:5432 / 127.0.0.1:6379; else testcontainers when a Docker engine answers; else a
clear message.  The concurrency tests open 200+ connections at once, so a local server
with a lower max_connections is raised (and restarted) when we are allowed to.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEEDED_CONNECTIONS = 300


def port_open(host: str, port: int) -> bool:
    with contextlib.closing(socket.socket()) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def docker_available() -> bool:
    if not shutil.which("docker"):
        return False
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


def ensure_max_connections(database_url: str) -> None:
    import psycopg

    with psycopg.connect(database_url, dbname="postgres", autocommit=True) as conn:
        current = int(conn.execute("SHOW max_connections").fetchone()[0])
        if current >= NEEDED_CONNECTIONS:
            return
        local = any(h in database_url for h in ("127.0.0.1", "localhost", "@/"))
        if not (local and shutil.which("pg_ctlcluster") and os.geteuid() == 0):
            sys.exit(
                f"PostgreSQL allows {current} connections; the concurrency tests need "
                f"{NEEDED_CONNECTIONS}.  Run: "
                f"ALTER SYSTEM SET max_connections = {NEEDED_CONNECTIONS}; "
                "and restart PostgreSQL."
            )
        print(
            f"Raising local PostgreSQL max_connections {current} -> {NEEDED_CONNECTIONS} (restart)."
        )
        conn.execute(f"ALTER SYSTEM SET max_connections = {NEEDED_CONNECTIONS}")
    version = next(Path("/etc/postgresql").iterdir()).name
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True
    )


def run_pytest(args: list[str]) -> int:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    return subprocess.call([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env)


def main(args: list[str]) -> int:
    if not os.environ.get("DATABASE_URL") and port_open("127.0.0.1", 5432):
        os.environ["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/seatkeeper"
    if not os.environ.get("REDIS_URL") and port_open("127.0.0.1", 6379):
        os.environ["REDIS_URL"] = "redis://127.0.0.1:6379/15"
        # Our own scratch database: start every run without counters, queues or caches left
        # by an earlier one.
        import redis

        redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()

    if os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL"):
        ensure_max_connections(os.environ["DATABASE_URL"])
        return run_pytest(args)

    if docker_available():
        from testcontainers.postgres import PostgresContainer
        from testcontainers.redis import RedisContainer

        with contextlib.ExitStack() as stack:
            if not os.environ.get("DATABASE_URL"):
                pg = PostgresContainer("postgres:16", driver=None).with_command(
                    f"postgres -c max_connections={NEEDED_CONNECTIONS}"
                )
                stack.enter_context(pg)
                os.environ["DATABASE_URL"] = pg.get_connection_url()
            if not os.environ.get("REDIS_URL"):
                redis = stack.enter_context(RedisContainer("redis:7"))
                os.environ["REDIS_URL"] = (
                    f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
                )
            return run_pytest(args)

    sys.stderr.write(
        "The tests need real PostgreSQL and Redis, and found neither a local server "
        "(127.0.0.1:5432, 127.0.0.1:6379), nor DATABASE_URL/REDIS_URL, nor a Docker engine "
        "for testcontainers.\nStart them, or set DATABASE_URL=postgres://... and "
        "REDIS_URL=redis://...\n"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
