"""The machine's NATS server with JetStream (127.0.0.1:4222), started if it is down, and a
stream of the test's own for every test that uses the event log.

Each test gets a unique stream name and subject prefix (parallel runs and xdist workers share
the one server) and its stream is deleted afterwards."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from kernel.eventlog.nats_client import LoopThread, connect
from kernel.eventlog.publisher import close_publishers

HOST, PORT = "127.0.0.1", 4222
NATS_URL = f"nats://{HOST}:{PORT}"
NATS_SERVER = "/usr/sbin/nats-server"
# The machine's own start command (also in .ci/run), so the tests and CI start it the same way.
START = [
    "start-stop-daemon", "--start", "--oknodo", "--background", "--exec", NATS_SERVER, "--",
    "-a", HOST, "-p", str(PORT), "-js", "-sd", "/var/lib/nats-server",
    "-l", "/var/log/nats-server.log",
]  # fmt: skip


def port_open() -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, PORT)) == 0


def ensure_nats_server() -> str:
    if not port_open():
        if not Path(NATS_SERVER).exists():
            pytest.fail(f"{NATS_SERVER} is missing: apt-get install nats-server", pytrace=False)
        Path("/var/lib/nats-server").mkdir(parents=True, exist_ok=True)
        starter = START if shutil.which("start-stop-daemon") else START[START.index("--") + 1 :]
        subprocess.run(starter, check=True, timeout=30)
        deadline = time.monotonic() + 15
        while not port_open():
            if time.monotonic() > deadline:
                pytest.fail("nats-server did not start on 127.0.0.1:4222", pytrace=False)
            time.sleep(0.1)
    return NATS_URL


@dataclass(frozen=True)
class StoredMessage:
    sequence: int
    subject: str
    msg_id: str
    data: bytes


class StreamInspector:
    """Reads a stream the way an operator would: message count and messages by sequence."""

    def __init__(self, url: str, stream: str) -> None:
        self.url, self.stream = url, stream
        self.loop = LoopThread(name="test-stream-inspector")

    def _run(self, make):
        async def go():
            nc = await connect(self.url, name="seatkeeper-tests")
            try:
                return await make(nc.jetstream())
            finally:
                await nc.close()

        return self.loop.run(go(), timeout=30)

    def messages(self) -> list[StoredMessage]:
        async def read(js):
            info = await js.stream_info(self.stream)
            found = []
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                m = await js.get_msg(self.stream, seq)
                found.append(
                    StoredMessage(seq, m.subject, (m.headers or {}).get("Nats-Msg-Id", ""), m.data)
                )
            return found

        return self._run(read)

    def exists(self) -> bool:
        async def check(js):
            try:
                await js.stream_info(self.stream)
                return True
            except Exception:
                return False

        return self._run(check)

    def delete(self) -> None:
        async def drop(js):
            with contextlib.suppress(Exception):
                await js.delete_stream(self.stream)

        self._run(drop)

    def close(self) -> None:
        self.loop.stop()


@pytest.fixture(scope="session")
def nats_server() -> str:
    return ensure_nats_server()


@pytest.fixture
def event_log(settings, nats_server):
    """The event log switched on, on a stream of this test's own; deleted afterwards."""
    run = uuid.uuid4().hex[:12]
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    settings.EVENT_LOG = {
        **settings.EVENT_LOG,
        "URL": nats_server,
        "STREAM": f"SK_TEST_{run}",
        "SUBJECT_PREFIX": f"sktest{run}",
        "LEASE_SECONDS": 2,
    }
    inspector = StreamInspector(nats_server, settings.EVENT_LOG["STREAM"])
    try:
        yield inspector
    finally:
        close_publishers()
        inspector.delete()
        inspector.close()
