"""scripts/run_tests.py, the README's `./scripts/test`: the tools it installs, and the
throw-away PostgreSQL and Redis it starts, uses and removes (never the machine's own)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
import redis

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run_tests.py"

_spec = importlib.util.spec_from_file_location("run_tests", SCRIPT)
run_tests = sys.modules.setdefault("run_tests", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(run_tests)

needs_postgres_binaries = pytest.mark.skipif(
    run_tests.postgres_bindir() is None, reason="no PostgreSQL server binaries on this machine"
)


def names(tools):
    return [t.command for t in tools]


# --- which tools a run needs ----------------------------------------------------------------


EVERY_TOOL = ["chromium", "docker-compose", "pgbouncer", "nginx", "node"]


def test_the_whole_suite_needs_every_tool():
    assert names(run_tests.tools_needed([])) == EVERY_TOOL
    assert names(run_tests.tools_needed(["-x", "-q", "-k", "hold"])) == EVERY_TOOL
    assert names(run_tests.tools_needed(["tests"])) == EVERY_TOOL


def test_a_run_of_some_directories_needs_only_their_tools():
    # PgBouncer serves every run: the concurrency, fault and payment tests go through it.
    assert names(run_tests.tools_needed(["tests/bookings", "-x"])) == ["pgbouncer"]
    assert names(run_tests.tools_needed(["tests/pages/test_browser.py::test_x"])) == [
        "chromium",
        "pgbouncer",
    ]
    assert names(run_tests.tools_needed(["tests/project", "tests/pages"])) == [
        "chromium",
        "docker-compose",
        "pgbouncer",
        "nginx",
    ]
    # Node checks the proof-of-work's scrypt in JavaScript against hashlib.
    assert names(run_tests.tools_needed(["tests/waitroom"])) == ["pgbouncer", "node"]


# --- installing them ------------------------------------------------------------------------


class FakeMachine:
    """`which` and `apt-get` of a machine where some programs are missing."""

    def __init__(self, missing, *, apt_installs=True):
        self.missing = set(missing)
        self.apt_installs = apt_installs
        self.commands = []

    def which(self, command):
        return None if command in self.missing else f"/usr/bin/{command}"

    def run(self, command, **kwargs):
        self.commands.append(command)
        assert kwargs["check"] and kwargs["env"]["DEBIAN_FRONTEND"] == "noninteractive"
        if self.apt_installs and command[:2] == ["apt-get", "install"]:
            self.missing -= set(command[2:])


def test_as_root_missing_chromium_is_installed_with_one_apt_get_update():
    machine = FakeMachine({"chromium", "docker-compose"})
    run_tests.ensure_tools(run_tests.TOOLS, which=machine.which, is_root=True, run=machine.run)
    assert machine.commands == [
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "chromium", "docker-compose"],
    ]
    assert machine.missing == set()


def test_nothing_is_installed_when_nothing_is_missing():
    machine = FakeMachine(set())
    run_tests.ensure_tools(run_tests.TOOLS, which=machine.which, is_root=True, run=machine.run)
    assert machine.commands == []


def test_not_root_it_says_exactly_what_to_install_and_stops():
    machine = FakeMachine({"chromium"})
    with pytest.raises(SystemExit) as stopped:
        run_tests.ensure_tools(run_tests.TOOLS, which=machine.which, is_root=False, run=machine.run)
    assert machine.commands == []
    message = str(stopped.value.code)
    assert "sudo apt-get install -y chromium\n" in message
    assert "'chromium' (Debian package chromium) for tests/pages" in message
    assert "docker-compose" not in message


def test_an_install_that_did_not_provide_the_program_stops_the_run():
    machine = FakeMachine({"docker-compose"}, apt_installs=False)
    with pytest.raises(SystemExit) as stopped:
        run_tests.ensure_tools(run_tests.TOOLS, which=machine.which, is_root=True, run=machine.run)
    assert "apt-get install -y docker-compose" in str(stopped.value.code)


# --- a PostgreSQL and a Redis of its own ----------------------------------------------------


def server_of(url):
    """Address, data directory and start time: which server answered, and whether it was
    restarted."""
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        return conn.execute(
            "SELECT inet_server_port(), current_setting('data_directory'),"
            " pg_postmaster_start_time()"
        ).fetchone()


@needs_postgres_binaries
def test_a_private_cluster_is_started_with_room_for_the_concurrency_tests_then_removed():
    machines_server = server_of(os.environ["DATABASE_URL"])
    with run_tests.private_postgres(run_tests.postgres_bindir()) as url:
        port, data_directory, _ = server_of(url)
        assert port != machines_server[0] and data_directory != machines_server[1]
        with psycopg.connect(url, dbname="postgres") as conn:
            settings = dict(
                conn.execute(
                    "SELECT name, setting FROM pg_settings"
                    " WHERE name IN ('max_connections', 'listen_addresses')"
                ).fetchall()
            )
        assert int(settings["max_connections"]) >= run_tests.NEEDED_CONNECTIONS
        assert settings["listen_addresses"] == "127.0.0.1"
    assert not Path(data_directory).exists()
    assert not run_tests.port_open("127.0.0.1", port)
    assert server_of(os.environ["DATABASE_URL"]) == machines_server  # untouched


@needs_postgres_binaries
def test_a_server_with_too_few_connections_is_never_restarted_only_explained(monkeypatch):
    monkeypatch.setattr(run_tests, "PRIVATE_MAX_CONNECTIONS", 40)
    with run_tests.private_postgres(run_tests.postgres_bindir()) as url:
        before = server_of(url)
        with pytest.raises(SystemExit) as stopped:
            run_tests.check_max_connections(url)
        assert server_of(url) == before  # same server, same start time: not restarted
    message = str(stopped.value.code)
    assert "allows 40 connections" in message
    assert f"ALTER SYSTEM SET max_connections = {run_tests.NEEDED_CONNECTIONS}" in message
    assert "unset DATABASE_URL" in message


@needs_postgres_binaries
def test_a_terminated_run_still_removes_its_cluster(tmp_path):
    """SIGTERM (and Ctrl-C) unwind through the `finally` that stops and deletes it."""
    code = (
        "import signal, sys, time\n"
        f"sys.path.insert(0, {str(SCRIPT.parent)!r})\n"
        "import run_tests\n"
        "signal.signal(signal.SIGTERM, run_tests._raise_on_terminate)\n"
        "with run_tests.private_postgres(run_tests.postgres_bindir()) as url:\n"
        "    print(url, flush=True)\n"
        "    time.sleep(120)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("postgres://"), process.stderr.read()
        _, data_directory, _ = server_of(url)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    assert not run_tests.port_open("127.0.0.1", port)
    assert not Path(data_directory).exists()


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="no redis-server")
def test_a_private_redis_keeps_nothing_and_is_stopped():
    with run_tests.private_redis(shutil.which("redis-server")) as url:
        server = redis.Redis.from_url(url)
        assert server.config_get("save") == {"save": ""}
        assert server.config_get("appendonly") == {"appendonly": "no"}
        port = server.connection_pool.connection_kwargs["port"]
        directory = server.config_get("dir")["dir"]
        server.close()
    assert not run_tests.port_open("127.0.0.1", port)
    assert not Path(directory).exists()


# --- which servers a run uses ---------------------------------------------------------------


@pytest.fixture
def dry_main(monkeypatch):
    """main() with pytest, the tool check and signal handlers replaced: returns the URLs the
    run would have handed to pytest, and what it started."""
    started = []

    @contextlib.contextmanager
    def fake_private(kind):
        started.append(kind)
        yield f"{kind}://private"

    monkeypatch.setattr(run_tests.signal, "signal", lambda *args: None)
    monkeypatch.setattr(run_tests, "tools_needed", lambda args: [])
    monkeypatch.setattr(run_tests, "postgres_bindir", lambda: Path("/pg/bin"))
    monkeypatch.setattr(run_tests, "private_postgres", lambda bindir: fake_private("postgres"))
    monkeypatch.setattr(run_tests, "private_redis", lambda binary: fake_private("redis"))
    monkeypatch.setattr(run_tests, "pgbouncer_binary", lambda: "/usr/sbin/pgbouncer")
    monkeypatch.setattr(
        run_tests, "private_pgbouncer", lambda binary, url: fake_private(f"pgbouncer for {url}")
    )
    monkeypatch.delenv(run_tests.PGBOUNCER_URL_VARIABLE, raising=False)
    monkeypatch.delenv(run_tests.POOLED_VARIABLE, raising=False)
    monkeypatch.setattr(run_tests, "check_max_connections", lambda url: None)
    seen = {}

    def fake_pytest(args):
        seen.update(DATABASE_URL=os.environ["DATABASE_URL"], REDIS_URL=os.environ["REDIS_URL"])
        seen.update(pooler=os.environ[run_tests.PGBOUNCER_URL_VARIABLE], args=args)
        seen.update(pooled=os.environ.get(run_tests.POOLED_VARIABLE, "default"))
        return 0

    monkeypatch.setattr(run_tests, "run_pytest", fake_pytest)

    def run(*args, **env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert run_tests.main(list(args)) == 0
        return seen, started

    return run


def test_urls_in_the_environment_win_and_only_a_pooler_is_started_in_front(dry_main):
    seen, started = dry_main(DATABASE_URL="postgres://mine/db", REDIS_URL="redis://mine/3")
    assert seen["DATABASE_URL"] == "postgres://mine/db" and seen["REDIS_URL"] == "redis://mine/3"
    assert started == ["pgbouncer for postgres://mine/db"]
    assert seen["pooler"] == "pgbouncer for postgres://mine/db://private"


def test_without_urls_a_private_postgres_redis_and_pgbouncer_are_started(dry_main):
    seen, started = dry_main(DATABASE_URL="", REDIS_URL="")
    assert seen["DATABASE_URL"] == "postgres://private" and seen["REDIS_URL"] == "redis://private"
    assert started == ["postgres", "redis", "pgbouncer for postgres://private"]
    assert seen["pooled"] == "default"


def test_pooled_puts_every_test_through_pgbouncer_and_is_not_passed_to_pytest(dry_main):
    seen, _ = dry_main("--pooled", "-x", DATABASE_URL="", REDIS_URL="")
    assert seen["pooled"] == "all" and seen["args"][-1:] == ["-x"]
    assert "--pooled" not in seen["args"]


@needs_postgres_binaries
def test_a_private_pgbouncer_runs_in_transaction_mode_as_a_user_and_is_stopped():
    binary = run_tests.pgbouncer_binary()
    with run_tests.private_pgbouncer(binary, os.environ["DATABASE_URL"]) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with psycopg.connect(
            url, dbname="pgbouncer", autocommit=True, prepare_threshold=None,
            cursor_factory=psycopg.ClientCursor,
        ) as console:  # fmt: skip
            rows = {row[0]: row[1] for row in console.execute("SHOW CONFIG").fetchall()}
        assert rows["pool_mode"] == "transaction"
        assert rows["ignore_startup_parameters"] == ""  # a startup `options` is refused
        users = subprocess.run(["ps", "-o", "user=", "-C", "pgbouncer"], capture_output=True)
        assert users.stdout and b"root" not in users.stdout.split()
    assert not run_tests.port_open("127.0.0.1", port)


# --- how many xdist workers -----------------------------------------------------------------


def workers(args, *, owns_redis=True, xdist=True, **environ):
    return run_tests.worker_count(args, owns_redis=owns_redis, environ=environ, xdist=lambda: xdist)


def test_the_whole_suite_runs_in_workers_named_paths_serially():
    assert workers([]) == workers(["-q", "-p", "no:randomly"]) == run_tests.TEST_WORKERS > 1
    assert workers(["tests/bookings"]) == 1
    assert workers(["tests/pages/test_browser.py::test_x", "-q"]) == 1
    assert workers(["tests/bookings"], SEATKEEPER_TEST_WORKERS="3") == 3
    assert workers([], SEATKEEPER_TEST_WORKERS="1") == 1
    assert run_tests.xdist_args(2) == ["-n", "2", "--dist", "loadgroup"]
    assert run_tests.xdist_args(1) == []


def test_a_callers_choice_or_a_redis_not_ours_means_no_workers_added():
    assert workers(["-n", "4"]) == workers(["-n4"]) == workers(["--numprocesses=3"]) == 1
    assert workers(["-p", "no:xdist"]) == workers(["--pdb"]) == 1
    assert workers([], owns_redis=False) == 1  # worker databases 1..N are someone else's
    assert workers([], xdist=False) == 1


def test_each_xdist_worker_gets_a_redis_database_of_its_own():
    from tests.xdist_redis import redis_url_for_worker

    assert redis_url_for_worker("redis://127.0.0.1:6390/0", "gw0") == "redis://127.0.0.1:6390/1"
    assert redis_url_for_worker("redis://127.0.0.1:6390/0", "gw1") == "redis://127.0.0.1:6390/2"
    assert redis_url_for_worker("redis://127.0.0.1:6390", "gw2") == "redis://127.0.0.1:6390/3"
    with pytest.raises(RuntimeError):
        redis_url_for_worker("redis://127.0.0.1:6390/0", "gw15")
