"""Settings renamed sale-neutral (issue 25) still read their flight-era name as an alias, as
README.md's settings table documents; the new name wins when both are set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NEW, OLD = "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE", "MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT"


def cap_read_with(**environment: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in {NEW, OLD}}
    env.update(environment, DJANGO_SETTINGS_MODULE="config.settings")
    script = f"from django.conf import settings; print(settings.SEATKEEPER[{NEW!r}])"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


@pytest.mark.parametrize(
    ("environment", "cap"),
    [
        ({}, 9),  # control: neither name set, the default
        ({NEW: "4"}, 4),
        ({OLD: "3"}, 3),
        ({NEW: "5", OLD: "3"}, 5),
    ],
)
def test_the_hold_cap_reads_its_new_name_and_its_flight_era_alias(environment, cap):
    assert cap_read_with(**environment) == cap


def test_readme_documents_both_names():
    readme = (ROOT / "README.md").read_text()
    assert f"`{NEW}`" in readme and f"`{OLD}`" in readme
