"""PostgreSQL restarted mid-sale, on a cluster of our own (bench/pg_restart.py, smaller).

Clients retry 5xx and dropped connections with their Idempotency-Key, as the API schema tells
them to.  Shown: the restart really hit the sale (503s), no answer was a 500, and every unit
held belongs to a booking some client was told about (no ghost holds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.pg_restart import run
from bench.stack import PG_BIN

pytestmark = pytest.mark.skipif(
    not (PG_BIN / "initdb").exists() or not shutil.which("redis-server"),
    reason="needs PostgreSQL server binaries and redis-server to start throw-away servers",
)


def test_restart_mid_sale_gives_no_500_and_no_ghost_holds(tmp_path: Path):
    report = run(clients=24, restart_at=2.0, duration=10.0, rows=60, log_dir=tmp_path)
    summary = report.summary()

    assert report.statuses[503] + report.connection_errors > 0, summary  # the restart hit
    assert report.statuses[201] > 0, summary
    assert report.server_errors == 0, (summary, (tmp_path / "web.log").read_text()[-3000:])
    assert report.ghost_holds == 0, summary
    assert report.held_units == len(report.told), summary
    assert report.inventory_clean, summary
