"""Who had the cores while the open loop's slow requests waited (`--open-loop-trace`).

The trace's 2-s timeline (bench/open_loop_trace.py) averages a burst of a few hundred
milliseconds away.  This view takes the sampler's fine samples (every 0.1 s in a traced run)
and splits them in two: the intervals during which a slow request (over `slow_s` from its
scheduled send) was waiting, and the rest.  For each, every process group's mean % of one
core, and the machine's CPU and I/O pressure (Linux PSI, /proc/pressure: the share of the
interval in which at least one runnable task waited for a core, or for I/O).

A group whose share is much higher in the slow intervals than in the calm ones is where the
cores went while requests queued; a high CPU pressure with no such group says the cores were
simply full; an I/O pressure says a disk stall.  The arithmetic is a plain function, tested in
tests/project/test_open_loop_trace.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.open_loop_trace import intervals

# (monotonic time, CPU seconds per group, machine busy CPU seconds): the sampler's samples.
Sample = tuple[float, dict[str, float], float]
# (monotonic time, cumulative µs some task stalled on CPU, the same on I/O).
Pressure = tuple[float, float, float]


def read_pressure(root: Path = Path("/proc/pressure")) -> tuple[float, float] | None:
    """The machine's cumulative `some` stall µs for CPU and I/O, or None without PSI."""
    totals = []
    for resource in ("cpu", "io"):
        try:
            first = (root / resource).read_text().splitlines()[0]
        except (OSError, IndexError):
            return None
        fields = dict(part.split("=", 1) for part in first.split()[1:])
        totals.append(float(fields["total"]))
    return totals[0], totals[1]


def _slow_windows(records: Iterable[tuple[float, float, int, bool]], slow_s: float):
    return sorted((due, due + latency) for due, latency, _, _ in records if latency > slow_s)


def blame(
    records: Iterable[tuple[float, float, int, bool]],
    samples: list[Sample],
    pressure: list[Pressure],
    *,
    began: float,
    slow_s: float = 0.05,
) -> dict[str, Any]:
    """Each group's mean % of one core, and the PSI stall %, over the sample intervals a slow
    request was waiting in ("slow") and over the rest ("calm").  Offsets are seconds from the
    monotonic time the run `began` (the records' zero)."""
    windows = _slow_windows(records, slow_s)

    def is_slow(t0: float, t1: float) -> bool:
        return any(start < t1 and end > t0 for start, end in windows)

    sums: dict[str, dict[str, float]] = {"slow": {}, "calm": {}}
    spans = {"slow": 0.0, "calm": 0.0}
    counts = {"slow": 0, "calm": 0}
    for t0, span, used, busy in intervals(samples):
        kind = "slow" if is_slow(t0 - began, t0 + span - began) else "calm"
        counts[kind] += 1
        spans[kind] += span
        for name, seconds in {**used, "machine": busy}.items():
            sums[kind][name] = sums[kind].get(name, 0.0) + seconds
    for (t0, c0, i0), (t1, c1, i1) in itertools.pairwise(pressure):
        if t1 <= t0:
            continue
        kind = "slow" if is_slow(t0 - began, t1 - began) else "calm"
        sums[kind]["psi cpu"] = sums[kind].get("psi cpu", 0.0) + (c1 - c0) / 1e6
        sums[kind]["psi io"] = sums[kind].get("psi io", 0.0) + (i1 - i0) / 1e6
    out: dict[str, Any] = {"slow_s": slow_s, "slow_requests": len(windows)}
    for kind in ("slow", "calm"):
        span = spans[kind]
        out[kind] = {
            "intervals": counts[kind],
            "seconds": span,
            "cpu": {k: v / span * 100 for k, v in sums[kind].items()} if span else {},
        }
    return out


def print_blame(view: dict[str, Any]) -> None:
    print(f"    blame ({view['slow_requests']} requests over {view['slow_s'] * 1000:.0f} ms; "
          "% of one core, PSI as % of the time some task stalled):")  # fmt: skip
    calm = view["calm"]["cpu"]
    slow = view["slow"]["cpu"]
    names = sorted(set(calm) | set(slow), key=lambda n: -(slow.get(n, 0) - calm.get(n, 0)))
    for kind in ("slow", "calm"):
        print(f"      {kind} ({view[kind]['intervals']} intervals, "
              f"{view[kind]['seconds']:.1f} s): "
              + " ".join(f"{n} {view[kind]['cpu'].get(n, 0):.0f}" for n in names))  # fmt: skip
