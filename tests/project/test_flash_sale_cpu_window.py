"""bench/flash_sale.py's CPU window: the load generator reads the stack's CPU seconds at the
start gate and after the last answer, per process group, and a process gone meanwhile counts
nothing rather than failing the run."""

from __future__ import annotations

import os
import threading
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


def _spin(seconds: float) -> None:
    deadline = time.thread_time() + seconds
    while time.thread_time() < deadline:
        pass


def test_the_window_counts_a_few_milliseconds_of_any_thread_to_well_under_a_tick():
    """(d)'s window is 0.2 s of 200 requests: a 10-ms clock tick per process would be 0.05 ms
    a request.  The window reads the threads' run time in nanoseconds, a thread started inside
    it included."""
    from bench.flash_sale_load import CpuWindow

    spun, release = threading.Event(), threading.Event()

    def http_thread() -> None:  # as granian's: it lives on after its request
        _spin(0.003)
        spun.set()
        release.wait()

    window = CpuWindow({"me": [os.getpid()], "gone": [2**22 + 7]})
    _spin(0.004)
    worker = threading.Thread(target=http_thread)
    worker.start()
    spun.wait()
    used = window.seconds()
    release.set()
    worker.join()
    assert 0.0065 <= used["me"] < 0.05, used
    assert used["gone"] == 0.0


def test_the_window_leaves_out_what_ran_before_it():
    """The control: a window opened after the work counts none of it."""
    from bench.flash_sale_load import CpuWindow

    _spin(0.02)
    window = CpuWindow({"me": [os.getpid()]})
    assert window.seconds()["me"] < 0.005
