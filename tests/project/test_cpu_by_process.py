"""bench/cpu_by_process.py's report: CPU per group from the first request to the last win,
interpolated between samples (a process born in between from nothing before its first
sample), per win, and the losers started before the last win counted."""

from __future__ import annotations

import json

from bench.cpu_by_process import report


def test_the_report_takes_the_window_from_the_first_request_to_the_last_win(tmp_path, capsys):
    samples = {
        "groups": {"1": "web", "2": "pg:web", "3": "worker"},
        "samples": [
            {"t": 10.0, "cpu": {"1": 1.0, "2": 5.0}, "machine": 100.0},
            {"t": 11.0, "cpu": {"1": 2.0, "2": 5.5, "3": 0.2}, "machine": 101.5},
            {"t": 12.0, "cpu": {"1": 3.0, "2": 6.0, "3": 0.4}, "machine": 103.0},
            {"t": 13.0, "cpu": {"1": 9.0, "2": 9.0, "3": 9.0}, "machine": 110.0},
        ],
    }
    # Two wins, the last one ending at 12.0; a loser before it, one after.
    records = [
        [10.5, 0.5, 201, True],
        [10.6, 1.4, 201, True],
        [11.0, 0.1, 409, False],
        [12.5, 0.1, 409, False],
    ]
    (tmp_path / "s.json").write_text(json.dumps(samples))
    (tmp_path / "r.json").write_text(json.dumps(records))
    report(tmp_path / "s.json", tmp_path / "r.json")
    out = capsys.readouterr().out
    assert "1.50 s: 2 wins, 1.3/s; 1 losers started before the last win" in out
    assert "machine busy 1.50 cores" in out
    # web: 1.5 at 10.5 -> 3.0 at 12.0; pg:web 5.25 -> 6.0; the worker (first seen at 11.0
    # with 0.2) 0.1 -> 0.4; after the last win (13.0's jump) nothing counts.
    assert "  web             1500 ms  750.00 ms/win   1.00 cores" in out
    assert "  pg:web           750 ms  375.00 ms/win   0.50 cores" in out
    assert "  worker           300 ms  150.00 ms/win   0.20 cores" in out
    assert "  sampled         2550 ms  1275.00 ms/win" in out
