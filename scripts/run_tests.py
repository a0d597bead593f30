"""Install what the tests need, give them PostgreSQL and Redis of their own, run pytest.

Tools: the browser tests drive Debian's `chromium`, the compose test runs Debian's
`docker-compose`, every run starts Debian's `pgbouncer`, the proxy test Debian's `nginx`.
When one is missing and we run as root with apt-get, it is installed; otherwise the run stops
and says what to install.

PostgreSQL, in this order:
  1. DATABASE_URL from the environment (must allow NEEDED_CONNECTIONS connections; we never
     restart a server we did not start, we say what to change);
  2. a throw-away cluster of our own: initdb into a temp dir, on a free 127.0.0.1 port,
     removed afterwards (also on failure and Ctrl-C), whenever the server binaries exist;
  3. testcontainers, when a Docker engine answers;
  4. else a clear message.
Redis likewise: REDIS_URL; a throw-away `redis-server`; the local server's db 15 (flushed);
testcontainers.
PgBouncer: a throw-away one in transaction mode in front of whichever PostgreSQL the run uses
(as the cluster's user: it refuses root), named in SEATKEEPER_TEST_PGBOUNCER_URL; the
concurrency, fault and payment tests go through it (tests/pgbouncer.py), every test with
`--pooled` (ours, not passed to pytest) or SEATKEEPER_NIGHTLY=1.
Redis Cluster: each test process starts its own on first use (tests/redis_cluster.py) for the
`redis_backend` tests; with `--on-cluster` or SEATKEEPER_NIGHTLY=1 it starts it up front and
every test runs with the filters, the waiting room and the cache on it (tests/cluster_run.py).

A private cluster is what lets two checkouts run their tests at the same time, lets the
concurrency tests have their few hundred connections, and never touches (let alone restarts)
the developer's own server.

Workers: the whole suite runs in TEST_WORKERS pytest-xdist processes (`-n 2 --dist loadgroup`):
most of its time is spent waiting on subprocesses, sleeps and the database, not on one CPU.
Each worker has its own test database (pytest-django's `_gw0` suffix) and its own database of
the private Redis (tests/xdist_redis.py).  A run of named paths is serial (one worker would
wait for the start-up of the other); SEATKEEPER_TEST_WORKERS=N overrides both.  Runs against
a Redis we did not start are serial too: worker databases 1..N of someone else's server are
not ours to use.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tools and throw-away servers live beside this script, which is run as a script,
# imported from scripts/ (bench) or loaded by its path (tests): its folder goes on the path.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_tests_servers import (  # noqa: E402, F401  (tests and benches use them from here)
    NO_DISK,
    PGBOUNCER_MAX_CLIENTS,
    PGBOUNCER_POOL_SIZE,
    _as_postgres_user,
    free_port,
    pgbouncer_binary,
    pgbouncer_ini,
    port_open,
    private_pgbouncer,
    private_redis,
    stop_process,
)
from run_tests_tools import (  # noqa: E402, F401
    TOOLS,
    Tool,
    ensure_tools,
    selected_paths,
    tools_needed,
)

# The concurrency tests open 200+ connections at once, next to uvicorn and Celery.
NEEDED_CONNECTIONS = 300
# Two xdist workers may both be in such a test at the same moment.
PRIVATE_MAX_CONNECTIONS = 800
TEST_WORKERS = 2


# --- helpers -------------------------------------------------------------------------------


def docker_available() -> bool:
    if not shutil.which("docker"):
        return False
    return subprocess.run(["docker", "info"], capture_output=True).returncode == 0


# --- PostgreSQL ----------------------------------------------------------------------------


def postgres_bindir() -> Path | None:
    """Where initdb and pg_ctl live: Debian's /usr/lib/postgresql/<v>/bin, else pg_config's."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            candidates.append(Path(out.stdout.strip()))
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    return None


@contextlib.contextmanager
def private_postgres(bindir: Path) -> Iterator[str]:
    """A throw-away cluster: initdb into a temp dir, start on a free port, yield its URL,
    then stop it and delete every file of it."""
    as_user = _as_postgres_user()
    tmp = Path(tempfile.mkdtemp(prefix="seatkeeper-pg-"))
    data, log = tmp / "data", tmp / "postgres.log"
    started = False
    try:
        if as_user:
            shutil.chown(tmp, user="postgres", group="postgres")
        subprocess.run(
            [
                *as_user,
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# seatkeeper ./scripts/test: a throw-away cluster\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{tmp}'\n"
                f"max_connections = {PRIVATE_MAX_CONNECTIONS}\n"
                # Nothing here must survive a crash: durability costs time, not safety.
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            )
        for _attempt in range(3):
            port = free_port()
            result = subprocess.run(
                [
                    *as_user,
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-o",
                    f"-p {port}",
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
                capture_output=True,
                text=True,
            )
            if result.returncode == 0:
                started = True
                break
        if not started:
            sys.exit(f"Could not start a private PostgreSQL:\n{log.read_text()}")
        print(
            f"PostgreSQL: private cluster on 127.0.0.1:{port} "
            f"(max_connections {PRIVATE_MAX_CONNECTIONS}, {tmp}, removed afterwards)",
            file=sys.stderr,
            flush=True,
        )
        yield f"postgres://postgres@127.0.0.1:{port}/seatkeeper"
    finally:
        # postmaster.pid, not `started`: a Ctrl-C while pg_ctl waited may leave a server up.
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
            )
        shutil.rmtree(tmp, ignore_errors=True)


def check_max_connections(database_url: str) -> None:
    """A server we did not start is never reconfigured or restarted: we say what to do."""
    import psycopg

    with psycopg.connect(database_url, dbname="postgres", autocommit=True) as conn:
        current = int(conn.execute("SHOW max_connections").fetchone()[0])
    if current < NEEDED_CONNECTIONS:
        sys.exit(
            f"The PostgreSQL at DATABASE_URL allows {current} connections; the concurrency "
            f"tests need {NEEDED_CONNECTIONS}.  Either raise it yourself:\n"
            f"  psql -U postgres -c 'ALTER SYSTEM SET max_connections = {NEEDED_CONNECTIONS}'"
            "  and restart that server,\n"
            "or unset DATABASE_URL: ./scripts/test then starts a throw-away cluster of its own "
            "(it needs the PostgreSQL server binaries, Debian package postgresql)."
        )


# --- PgBouncer (the pooler itself: run_tests_servers) ---------------------------------------

# Where the tests find the pooler (tests/pgbouncer.py), and which tests go through it:
# by default the concurrency, fault and payment tests; "all" (--pooled, or the nightly run)
# every test.  The test database itself is always created and dropped on a direct connection.
PGBOUNCER_URL_VARIABLE = "SEATKEEPER_TEST_PGBOUNCER_URL"
POOLED_VARIABLE = "SEATKEEPER_POOLED_TESTS"
# Every test with the filters, the waiting room and the cache on a Redis Cluster of each test
# process's own (tests/cluster_run.py): "all" with --on-cluster, or in the nightly run.
CLUSTER_VARIABLE = "SEATKEEPER_CLUSTER_TESTS"


# --- workers -------------------------------------------------------------------------------


def _xdist_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("xdist") is not None


def worker_count(
    args: Sequence[str],
    *,
    owns_redis: bool,
    environ: dict[str, str] | None = None,
    xdist: Callable[[], bool] = _xdist_installed,
) -> int:
    """How many pytest-xdist workers: TEST_WORKERS for the whole suite, 1 for named paths,
    SEATKEEPER_TEST_WORKERS when set; 1 when the caller chose (-n, -p no:xdist, --pdb), when
    the Redis is not ours to split into databases, or without pytest-xdist."""
    environ = os.environ if environ is None else environ
    chosen = {"-n", "--numprocesses", "--pdb", "--trace", "no:xdist"}
    if any(a in chosen or a.startswith(("-n", "--numprocesses=")) for a in args):
        return 1
    if not owns_redis or not xdist():
        return 1
    if environ.get("SEATKEEPER_TEST_WORKERS"):
        return max(1, int(environ["SEATKEEPER_TEST_WORKERS"]))
    named = [a for a in args if not a.startswith("-") and (ROOT / a.split("::")[0]).exists()]
    return 1 if named else TEST_WORKERS


def xdist_args(workers: int) -> list[str]:
    # loadgroup: tests go out one by one in collection order, so each worker, like a serial
    # run, has every plain `db` test behind it before its first transactional one (whose flush
    # deletes the rows data migrations installed); a module marked `xdist_group` (its
    # module-scoped servers) stays on one worker.
    return ["-n", str(workers), "--dist", "loadgroup"] if workers > 1 else []


# --- main ----------------------------------------------------------------------------------


def run_pytest(args: list[str]) -> int:
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "--durations=15", *args], cwd=ROOT, env=env
    )
    try:
        return process.wait()
    except KeyboardInterrupt:
        # pytest got the Ctrl-C too: let it tear down its servers and test database first.
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise


def _raise_on_terminate(signum, frame):
    raise SystemExit(128 + signum)


def main(args: list[str]) -> int:
    # A killed run still stops and deletes what it started (the `finally` blocks below).
    signal.signal(signal.SIGTERM, _raise_on_terminate)
    signal.signal(signal.SIGHUP, _raise_on_terminate)
    if "--pooled" in args:  # ours, not pytest's: every test through PgBouncer
        args = [a for a in args if a != "--pooled"]
        os.environ[POOLED_VARIABLE] = "all"
    if "--on-cluster" in args:  # ours too: every test on a Redis Cluster (tests/cluster_run.py)
        args = [a for a in args if a != "--on-cluster"]
        os.environ[CLUSTER_VARIABLE] = "all"
    ensure_tools(tools_needed(args))

    owns_redis = not os.environ.get("REDIS_URL") and not os.environ.get("CELERY_BROKER_URL")
    with contextlib.ExitStack() as stack:
        if os.environ.get("DATABASE_URL"):
            check_max_connections(os.environ["DATABASE_URL"])
        elif bindir := postgres_bindir():
            os.environ["DATABASE_URL"] = stack.enter_context(private_postgres(bindir))

        if os.environ.get("REDIS_URL"):
            pass
        elif redis_server := shutil.which("redis-server"):
            os.environ["REDIS_URL"] = stack.enter_context(private_redis(redis_server))
        elif port_open("127.0.0.1", 6379):
            owns_redis = False  # the machine's server: db 15 is ours, the others are not
            os.environ["REDIS_URL"] = "redis://127.0.0.1:6379/15"
            # Our own scratch database: start every run without counters, queues or caches
            # left by an earlier one.
            import redis

            redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()

        if not (os.environ.get("DATABASE_URL") and os.environ.get("REDIS_URL")):
            if not docker_available():
                sys.stderr.write(
                    "The tests need real PostgreSQL and Redis, and found neither the server "
                    "programs (initdb/pg_ctl, redis-server), nor DATABASE_URL/REDIS_URL, nor a "
                    "Docker engine for testcontainers.\nInstall them (Debian: apt-get install "
                    "postgresql redis-server), or set DATABASE_URL=postgres://... and "
                    "REDIS_URL=redis://...\n"
                )
                return 2
            from testcontainers.postgres import PostgresContainer
            from testcontainers.redis import RedisContainer

            if not os.environ.get("DATABASE_URL"):
                pg = PostgresContainer("postgres:16", driver=None).with_command(
                    f"postgres -c max_connections={PRIVATE_MAX_CONNECTIONS}"
                )
                stack.enter_context(pg)
                os.environ["DATABASE_URL"] = pg.get_connection_url()
            if not os.environ.get("REDIS_URL"):
                container = stack.enter_context(RedisContainer("redis:7"))
                os.environ["REDIS_URL"] = (
                    f"redis://{container.get_container_host_ip()}:"
                    f"{container.get_exposed_port(6379)}/0"
                )
        if os.environ.get("DATABASE_URL") and not os.environ.get(PGBOUNCER_URL_VARIABLE):
            binary = pgbouncer_binary()
            if binary is None:
                sys.exit("PgBouncer (Debian package pgbouncer) is missing: apt-get install it")
            os.environ[PGBOUNCER_URL_VARIABLE] = stack.enter_context(
                private_pgbouncer(binary, os.environ["DATABASE_URL"])
            )
        workers = worker_count(args, owns_redis=owns_redis)
        if workers > 1:
            print(f"pytest: {workers} xdist workers", file=sys.stderr, flush=True)
        return run_pytest([*xdist_args(workers), *args])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
