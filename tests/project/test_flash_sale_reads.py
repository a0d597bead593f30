"""bench/flash_sale.py's (e): the warm read and its 304 in pairs of loads taken in turn, each
kind pooled, so a drift of the machine over the run falls on both alike."""

from __future__ import annotations

import pytest

from bench import flash_sale_reads
from bench.flash_sale_reads import pooled_reads, warm_and_not_modified


def load_result(requests: int, web_seconds: float, p50: float) -> dict:
    return {
        "scenario": "reads-warm 1/4",
        "requests": requests,
        "wins": requests,
        "elapsed_s": 0.5,
        "all_p50": p50,
        "window_cpu": {"web": web_seconds, "loadgen": 0.01},
    }


@pytest.fixture
def drifting_machine(monkeypatch):
    """Each load costs more web CPU than the one before (the machine slows down); a 304 costs
    0.1 ms less than a warm read taken at the same moment."""
    taken: list[str] = []

    def run_load(spec):
        kind = "304" if "etag" in spec else "warm"
        taken.append(kind)
        per_request_ms = 0.5 + 0.1 * len(taken) - (0.1 if kind == "304" else 0.0)
        return {"spec": spec, "ms": per_request_ms}

    def measured(stack, fn):
        return fn()

    def summarise(name, result, win_label="ok"):
        requests = result["spec"]["requests"]
        return load_result(requests, result["ms"] * requests / 1000, result["ms"])

    monkeypatch.setattr(flash_sale_reads, "run_load", run_load)
    monkeypatch.setattr(flash_sale_reads, "measured", measured)
    monkeypatch.setattr(flash_sale_reads, "summarise", summarise)
    return taken


def test_pairs_alternate_which_kind_goes_first(drifting_machine):
    spec = {"requests": 1000, "flight_queue": [1], "tokens": ["-"] * 8}
    out = warm_and_not_modified(None, spec, 'W/"v1"', 4)
    assert drifting_machine == ["warm", "304", "304", "warm", "warm", "304", "304", "warm"]
    assert out["warm"]["requests"] == out["not_modified"]["requests"] == 1000
    warm = out["warm"]["window_cpu_ms_per_request"]["web"]
    not_modified = out["not_modified"]["window_cpu_ms_per_request"]["web"]
    # Taken in turn, the drift cancels: exactly the 0.1 ms the 304 spares.
    assert warm - not_modified == pytest.approx(0.1)


def test_control_a_single_pair_lets_the_drift_eat_the_saving(drifting_machine):
    """One pair is the old order, all warm reads then all 304s: on the same drifting machine
    the 304 comes out no cheaper than the 200."""
    spec = {"requests": 1000, "flight_queue": [1], "tokens": ["-"] * 8}
    out = warm_and_not_modified(None, spec, 'W/"v1"', 1)
    assert drifting_machine == ["warm", "304"]
    warm = out["warm"]["window_cpu_ms_per_request"]["web"]
    not_modified = out["not_modified"]["window_cpu_ms_per_request"]["web"]
    assert not_modified >= warm - 1e-9


def test_pooled_reads_add_up_requests_and_window_cpu():
    pooled = pooled_reads(
        [load_result(250, 0.1, 0.4), load_result(250, 0.2, 0.6), load_result(500, 0.3, 0.5)]
    )
    assert pooled["requests"] == 1000 and pooled["elapsed_s"] == 1.5
    assert pooled["window_cpu"] == pytest.approx({"web": 0.6, "loadgen": 0.03})
    assert pooled["window_cpu_ms_per_request"]["web"] == pytest.approx(0.6)
    assert pooled["all_p50"] == 0.5 and len(pooled["loads"]) == 3
