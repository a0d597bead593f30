"""`./scripts/run` for a newcomer (issue 31 item 14): migrations run quietly, and the output
ends with one short block (the URL, the two demo logins, the API docs, what needs Redis),
with passwords that stay the same from one run to the next."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.project.test_embedded_run import ROOT, embedded_env, free_port


def run_until_ready(env: dict[str, str], log: Path, *, timeout: float = 400) -> list[str]:
    with log.open("w") as out:
        run = subprocess.Popen(
            [str(ROOT / "scripts/run")],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout
            while "Stop with Ctrl+C." not in log.read_text():
                assert run.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.5)
            time.sleep(2)  # anything printed right after the block would show now
            return log.read_text().splitlines()  # before stopping it says "Shutting down"
        finally:
            os.killpg(run.pid, signal.SIGTERM)
            run.wait(timeout=60)


def test_scripts_run_ends_with_a_short_block_and_keeps_the_passwords(tmp_path):
    env = embedded_env(tmp_path / "demo.sqlite3")
    del env["DEMO_PASSWORD"]
    port = free_port()
    env.update(PORT=str(port), DEMO_DAYS="2", DEMO_PASSWORD_FILE=str(tmp_path / "demo-password"))
    env.pop("LOG_LEVEL", None)

    lines = run_until_ready(env, tmp_path / "first.log")

    text = "\n".join(lines)
    assert not [line for line in lines if "Applying" in line], text
    # Nothing alarming above the block (kombu warned of the in-process broker's missing host).
    assert not [line for line in lines if "WARNING" in line], text
    assert len(lines) <= 20, text
    start = max(i for i, line in enumerate(lines) if line.startswith("Seatkeeper is ready"))
    block = lines[start:]
    assert block[0] == f"Seatkeeper is ready: http://127.0.0.1:{port}/"
    assert block[-1] == "Stop with Ctrl+C.", text  # the block is the end
    assert len(block) <= 8
    password = (tmp_path / "demo-password").read_text().strip()
    assert any(f"username=demo  password={password}" in line for line in block), text
    assert any(f"username=staff  password={password}" in line for line in block), text
    assert any(f"http://127.0.0.1:{port}/api/docs/" in line for line in block), text
    assert any(line.strip().startswith("Redis") for line in block), text

    # Again: the same logins (the password was kept in the file, not drawn anew).
    port = free_port()
    env["PORT"] = str(port)
    again = run_until_ready(env, tmp_path / "second.log")
    assert any(f"username=demo  password={password}" in line for line in again), again
