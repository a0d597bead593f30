"""bench/flash_sale.py's CPU window: the load generator reads the stack's CPU seconds at the
start gate and after the last answer, per process group, and a process gone meanwhile counts
nothing rather than failing the run."""

from __future__ import annotations

import os
import time

from bench.flash_sale import cpu_seconds


def test_cpu_seconds_counts_a_groups_processes_and_skips_the_gone():
    before = cpu_seconds({"me": [os.getpid()], "gone": [2**22 + 7]})
    deadline = time.process_time() + 0.2
    while time.process_time() < deadline:
        pass
    after = cpu_seconds({"me": [os.getpid()], "gone": [2**22 + 7]})
    assert after["me"] - before["me"] >= 0.15
    assert before["gone"] == after["gone"] == 0.0
