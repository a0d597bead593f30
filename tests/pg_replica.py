"""A real streaming replica of the run's PostgreSQL, for the read-replica tests.

`pg_basebackup -R` copies DATABASE_URL's server into a temp dir (writing standby.signal and
primary_conninfo), and the copy starts as a hot standby on a free loopback port, as the
server's own user (PostgreSQL refuses root).  It streams from the primary until it is
stopped and deleted.  `pause()` / `resume()` stop and restart replay (the standby keeps
receiving WAL, so it falls behind exactly as a replica that cannot keep up does).
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psycopg

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("run_tests", ROOT / "scripts" / "run_tests.py")
run_tests = sys.modules.setdefault("run_tests", importlib.util.module_from_spec(_spec))
if not hasattr(run_tests, "postgres_bindir"):
    _spec.loader.exec_module(run_tests)


@dataclass
class Standby:
    host: str
    port: int
    user: str
    data: Path
    bindir: Path
    as_user: list[str]

    def url(self, database: str) -> str:
        return f"postgres://{self.user}@{self.host}:{self.port}/{database}"

    def sql(self, statement: str, database: str = "postgres"):
        with psycopg.connect(self.url(database), autocommit=True, connect_timeout=5) as conn:
            return conn.execute(statement).fetchone()

    def pause(self) -> None:
        self.sql("SELECT pg_wal_replay_pause()")

    def resume(self) -> None:
        self.sql("SELECT pg_wal_replay_resume()")

    def stop(self) -> None:
        subprocess.run(
            [
                *self.as_user,
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "fast",
                "stop",
            ],
            capture_output=True,
        )

    def start(self) -> None:
        result = subprocess.run(
            [
                *self.as_user,
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.data.parent / "standby.log"),
                "-o",
                f"-p {self.port}",
                "-w",
                "-t",
                "60",
                "start",
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            log = self.data.parent / "standby.log"
            raise RuntimeError(f"standby did not start: {result.stderr}\n{log.read_text()}")

    def wait_caught_up(self, primary_url: str, timeout: float = 30.0) -> None:
        with psycopg.connect(primary_url, autocommit=True) as primary:
            wanted = primary.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            (done,) = self.sql(f"SELECT pg_last_wal_replay_lsn() >= '{wanted}'::pg_lsn")
            if done:
                return
            time.sleep(0.05)
        raise TimeoutError(f"the standby did not replay up to {wanted} in {timeout} s")


@contextlib.contextmanager
def streaming_standby(primary_url: str) -> Iterator[Standby]:
    parts = urlsplit(primary_url)
    host, port, user = parts.hostname or "127.0.0.1", parts.port or 5432, parts.username
    bindir = run_tests.postgres_bindir()
    if bindir is None:
        raise RuntimeError("no PostgreSQL server binaries (pg_basebackup, pg_ctl) found")
    as_user = run_tests._as_postgres_user()
    tmp = Path(tempfile.mkdtemp(prefix="seatkeeper-standby-"))
    data = tmp / "data"
    if as_user:
        shutil.chown(tmp, user="postgres", group="postgres")
    standby = Standby(
        host="127.0.0.1",
        port=run_tests.free_port(),
        user=user or "postgres",
        data=data,
        bindir=bindir,
        as_user=as_user,
    )
    try:
        subprocess.run(
            [
                *as_user,
                str(bindir / "pg_basebackup"),
                "-h",
                host,
                "-p",
                str(port),
                "-U",
                standby.user,
                "-D",
                str(data),
                "-R",  # standby.signal + primary_conninfo
                "-X",
                "stream",
                "--no-sync",
            ],
            check=True,
            capture_output=True,
        )
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# seatkeeper tests: a hot standby of the run's cluster\n"
                "hot_standby = on\n"
                f"unix_socket_directories = '{tmp}'\n"
                "listen_addresses = '127.0.0.1'\n"
                # Queries on the standby are never cancelled for replay in these tests.
                "max_standby_streaming_delay = -1\n"
                "wal_receiver_status_interval = 1s\n"
            )
        standby.start()
        yield standby
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
            )
        shutil.rmtree(tmp, ignore_errors=True)
