"""Where an open-loop run's time goes (bench/open_loop.py, `--open-loop-trace`).

Three views of one run, so a queue can be placed rather than guessed:

* the load generator's own lag: each arrival's actual send against its scheduled time (a
  starved or overloaded generator sends late, and a latency counted from the actual send
  would hide that wait: coordinated omission), and how many requests opened a new TCP
  connection (and how long the connect took) instead of reusing an idle one;
* the server's side: each arrival carries an X-Request-ID, the stack logs JSON (LOG_FORMAT=
  json) with the request's time inside Django (MetricsMiddleware's duration_ms) and when it
  ended; the rest of the client's latency is outside Django (the kernel's accept queue,
  granian's queue for a blocking thread, the response's way back, the generator's loop);
* CPU per process group, sampled every half second while the run lasts (psutil), with the
  machine's total, so the other tenants of the two cores show as "other"; and the bench
  database's backends by state and wait event (lock waits show as `Lock`).

The arithmetic is plain functions, tested in tests/project/test_open_loop_trace.py.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# (scheduled offset s, sent offset s, latency from the send s, status, new connection,
# connect s, request id, sent wall-clock time): one arrival as the load generator traces it.
Trace = tuple[float, float, float, int, bool, float, str, float]


def quantiles(values: list[float]) -> dict[str, float | None]:
    from bench.open_loop import QUANTILES, pct

    return {name: pct(values, q) for name, q in QUANTILES} | {
        "max": max(values) if values else None
    }


def generator_view(traces: Iterable[Trace]) -> dict[str, Any]:
    """The load generator's send lag (actual send minus scheduled time) and its new
    connections: the part of a latency the stack never saw."""
    traces = list(traces)
    lags = [sent - scheduled for scheduled, sent, *_ in traces]
    connects = [t[5] for t in traces if t[4]]
    return {
        "arrivals": len(traces),
        "send_lag": quantiles(lags),
        "new_connections": len(connects),
        "connect": quantiles(connects),
    }


def access_lines(log: Path, prefix: str) -> dict[str, dict[str, Any]]:
    """The stack's JSON access-log lines (seatkeeper.requests) whose request id starts with
    `prefix`, by request id."""
    out = {}
    with contextlib.suppress(FileNotFoundError), log.open(errors="replace") as lines:
        for line in lines:
            if prefix not in line or '"seatkeeper.requests"' not in line:
                continue
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if str(entry.get("request_id", "")).startswith(prefix):
                    out[entry["request_id"]] = entry
    return out


def _wall(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts).timestamp()


def server_view(traces: Iterable[Trace], lines: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each traced request's latency split at Django's edges: before (the send to Django's
    first middleware: connect, accept queue, granian's wait for a blocking thread), inside
    (duration_ms), after (the answer's way back to the generator's loop).  The log's
    timestamp has millisecond precision, so before/after are good to about a millisecond."""
    before, inside, after = [], [], []
    unmatched = 0
    for _, _, latency, _, _, _, request_id, sent_wall in traces:
        entry = lines.get(request_id)
        if not entry:
            unmatched += 1
            continue
        duration = float(entry["duration_ms"]) / 1000
        ended = _wall(entry["ts"])
        before.append(max(0.0, ended - duration - sent_wall))
        inside.append(duration)
        after.append(max(0.0, sent_wall + latency - ended))
    return {
        "matched": len(inside),
        "unmatched": unmatched,
        "before_django": quantiles(before),
        "in_django": quantiles(inside),
        "after_django": quantiles(after),
    }


def intervals(samples: list[tuple[float, dict[str, float], float]]):
    """From cumulative samples (monotonic time, CPU seconds per group, machine busy CPU
    seconds), each interval between two samples: (start, span s, CPU seconds each group used
    in it, with `other` the machine's busy time no group accounts for, machine busy s)."""
    for (t0, g0, m0), (t1, g1, m1) in itertools.pairwise(samples):
        span = t1 - t0
        if span <= 0:
            continue
        used = {name: max(0.0, seconds - g0.get(name, seconds)) for name, seconds in g1.items()}
        busy = max(0.0, m1 - m0)
        used["other"] = max(0.0, busy - sum(used.values()))
        yield t0, span, used, busy


def cpu_shares(
    samples: list[tuple[float, dict[str, float], float]], cores: int
) -> dict[str, dict[str, float]]:
    """From cumulative samples (monotonic time, CPU seconds per group, machine busy CPU
    seconds), each group's mean and peak % of one core between samples; `other` is the
    machine's busy time no group accounts for (the other tenants), `idle` what was left."""
    out: dict[str, list[float]] = {}
    for _, span, used, busy in intervals(samples):
        for name, seconds in used.items():
            out.setdefault(name, []).append(seconds / span * 100)
        out.setdefault("idle", []).append(max(0.0, cores * span - busy) / span * 100)
    return {name: {"mean": sum(v) / len(v), "peak": max(v)} for name, v in out.items() if v}


def timeline(
    records: Iterable[tuple[float, float, int, bool]],
    samples: list[tuple[float, dict[str, float], float]],
    *,
    began: float | None = None,
    step: float = 2.0,
) -> list[dict[str, Any]]:
    """Per `step` seconds of scheduled time: arrivals, the winners' share, the latency's p50
    and max, and (with the samples and the monotonic time the run `began`) each group's %
    of one core: whether a queue grew with the sale's phase (winners cost more than losers)
    or with a neighbour's burst."""
    from bench.open_loop import pct

    buckets: dict[int, list[tuple[float, bool]]] = {}
    for due, latency, _, won in records:
        buckets.setdefault(int(due // step), []).append((latency, won))
    cpu: dict[int, dict[str, list[float]]] = {}
    if began is not None:
        for t0, span, used, _ in intervals(samples):
            slot = cpu.setdefault(int((t0 - began) // step), {})
            for name, seconds in used.items():
                slot.setdefault(name, []).append(seconds / span * 100)
    out = []
    for key in sorted(buckets):
        latencies = [lat for lat, _ in buckets[key]]
        row = {
            "from_s": key * step,
            "arrivals": len(latencies),
            "won": sum(1 for _, won in buckets[key] if won) / len(latencies),
            "p50": pct(latencies, 0.5),
            "max": max(latencies),
        }
        shares = cpu.get(key, {})
        row["cpu"] = {name: sum(v) / len(v) for name, v in shares.items() if v}
        out.append(row)
    return out


class Sampler(threading.Thread):
    """Samples, every `interval` s until stopped, the CPU seconds of each process group
    (`groups()` is asked each time: the load generator starts after the sampler), the
    machine's busy CPU seconds, and the bench database's backends by state/wait event."""

    def __init__(self, groups, *, database_url: str | None = None, interval: float = 0.5):
        super().__init__(daemon=True)
        self.groups, self.interval, self.database_url = groups, interval, database_url
        self.samples: list[tuple[float, dict[str, float], float]] = []
        self.pressure: list[tuple[float, float, float]] = []  # open_loop_blame's Pressure
        self.waits: Counter[str] = Counter()
        self.polls = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        import psutil

        from bench.open_loop_blame import read_pressure

        conn = None
        if self.database_url:
            import psycopg

            with contextlib.suppress(psycopg.Error):
                conn = psycopg.connect(self.database_url, autocommit=True)
        while True:
            groups = {}
            for name, pids in self.groups().items():
                groups[name] = 0.0
                for pid in pids:
                    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                        t = psutil.Process(pid).cpu_times()
                        groups[name] += t.user + t.system
            m = psutil.cpu_times()
            busy = sum(m) - m.idle - getattr(m, "iowait", 0.0)
            now = time.monotonic()
            self.samples.append((now, groups, busy))
            stalls = read_pressure()
            if stalls is not None:
                self.pressure.append((now, *stalls))
            if conn is not None:
                self._poll_backends(conn)
            if self._stop_event.wait(self.interval):
                break
        if conn is not None:
            conn.close()

    def _poll_backends(self, conn) -> None:
        rows = conn.execute(
            "SELECT state, coalesce(wait_event_type || ':' || wait_event, '') FROM "
            "pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        self.polls += 1
        for state, wait in rows:
            self.waits[f"{state or '?'} {wait}".strip()] += 1

    def stop(self) -> dict[str, Any]:
        import psutil

        self._stop_event.set()
        self.join()
        return {
            "cpu": cpu_shares(self.samples, psutil.cpu_count()),
            "backends": {k: v / max(1, self.polls) for k, v in self.waits.most_common(8)},
        }


def process_groups(stack, loadgen_pid: int | None, database: str) -> dict[str, list[int]]:
    """The stack's groups, the load generator, our database's PostgreSQL backends, the
    rest of PostgreSQL (other databases, the cluster's own processes) and Redis."""
    import psutil

    groups = stack.groups() if stack else {}
    if loadgen_pid:
        groups["loadgen"] = [loadgen_pid]
    ours, rest, redis = [], [], []
    for p in psutil.process_iter(["name", "cmdline"]):
        name, cmd = p.info["name"] or "", " ".join(p.info["cmdline"] or [])
        if name == "postgres" or cmd.startswith("postgres:"):
            (ours if f" {database} " in f"{cmd} " else rest).append(p.pid)
        elif name == "redis-server" and ":6379" in cmd:
            redis.append(p.pid)
    return groups | {"postgres(bench db)": ours, "postgres(rest)": rest, "redis": redis}


def print_view(out: dict[str, Any]) -> None:
    def q(d: dict[str, float | None]) -> str:
        return " ".join(f"{k} {'-' if v is None else f'{v * 1000:.1f}'}" for k, v in d.items())

    g = out["generator"]
    print(f"    generator: send lag ms {q(g['send_lag'])}; {g['new_connections']} new "
          f"connections, connect ms {q(g['connect'])}")  # fmt: skip
    s = out.get("server")
    if s:
        print(f"    server ({s['matched']} matched, {s['unmatched']} not): before Django ms "
              f"{q(s['before_django'])} | in Django ms {q(s['in_django'])} | after ms "
              f"{q(s['after_django'])}")  # fmt: skip
    cpu = out["sampled"]["cpu"]
    print("    cpu % of one core, mean/peak: "
          + ", ".join(f"{k} {v['mean']:.0f}/{v['peak']:.0f}" for k, v in cpu.items()))  # fmt: skip
    for row in out.get("timeline", []):
        shares = row["cpu"]
        busiest = sorted(shares.items(), key=lambda kv: -kv[1])[:5]
        print(f"    {row['from_s']:>4.0f} s: {row['arrivals']} arrivals, {row['won']:.0%} won, "
              f"p50 {row['p50'] * 1000:.0f} max {row['max'] * 1000:.0f} ms | cpu "
              + " ".join(f"{k} {v:.0f}" for k, v in busiest))  # fmt: skip
    backends = out["sampled"]["backends"]
    print("    bench db backends (mean count): "
          + ", ".join(f"{k} {v:.1f}" for k, v in backends.items()))  # fmt: skip
