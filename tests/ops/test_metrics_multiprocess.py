"""With PROMETHEUS_MULTIPROC_DIR, counters from several processes (web workers, Celery
workers) add up in whichever process answers /metrics."""

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
SETUP = "import django; django.setup(); "


def run(code: str, env: dict) -> str:
    result = subprocess.run(
        [sys.executable, "-c", SETUP + code],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_counters_of_separate_processes_add_up(tmp_path):
    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    count = "from kernel import metrics; metrics.count('holds', outcome='won', reason='')"
    run(count, env)  # a web worker
    run(count + "; metrics.count('sales', 3)", env)  # a Celery worker
    # A third process answers /metrics (its state gauges may log that the database of this
    # environment is not there; the counters do not need it).
    text = run("from config import metrics; print(metrics.render().decode())", env)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("seatkeeper_holds_total", (("outcome", "won"), ("reason", "")))] == 2
    assert samples[("seatkeeper_bookings_confirmed_total", ())] == 1
    assert samples[("seatkeeper_units_sold_total", ())] == 3
