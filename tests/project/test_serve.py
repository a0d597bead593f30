"""`manage.py serve` with Redis: the compose processes (N uvicorn workers, Celery worker,
beat) as children, all stopped with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
import requests

from tests.pgbouncer import database_env
from tests.project.test_connection_budget import ROOT, free_port, wait_up

pytestmark = pytest.mark.django_db(transaction=True)


def test_serve_runs_web_workers_worker_and_beat_and_stops_them_all(tmp_path):
    port = free_port()
    # As ./scripts/run starts it: development mode (production start-up checks are tested in
    # test_security_settings.py).
    env = {**os.environ, **database_env(), "DJANGO_DEBUG": "true"}
    log = (tmp_path / "serve.log").open("wb")
    serve = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port), "--workers", "2"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_up(f"http://127.0.0.1:{port}", [serve], tmp_path)
        assert requests.get(f"http://127.0.0.1:{port}/api/flights/1/seats").status_code == 404
        family = psutil.Process(serve.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in family]
        assert sum("uvicorn" in c for c in commands) == 1
        assert sum("spawn_main" in c for c in commands) >= 2  # the two web workers
        assert any(" worker " in c for c in commands) and any(" beat " in c for c in commands)
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(p.is_running() for p in family):
            time.sleep(0.3)
        assert not [p for p in family if p.is_running() and p.status() != "zombie"]
    finally:
        if serve.poll() is None:
            serve.kill()
