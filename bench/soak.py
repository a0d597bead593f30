"""Soak: a steady, moderate load for a while, watching for anything that grows.

    .venv/bin/python bench/soak.py                    # 10 minutes, samples every minute
    .venv/bin/python bench/soak.py --minutes 3 --sample-seconds 30 --clients 8

Starts its own PostgreSQL cluster, Redis and the whole stack (uvicorn with 2 workers, a Celery
worker, the beat) with short holds (`--hold-ttl`, so expiries run all the time).  Clients hold
one or two seats, cancel about a third of their holds and leave the rest to expire, pacing
themselves to `--rate` holds a second in total.  Every sample prints: resident memory per
process, PostgreSQL connections, p99 latency of the requests in the window, and the
invariants (`check_inventory`, outbox backlog).  At the end: a growth-trend verdict from a
least-squares slope over the samples (the first one is warm-up and left out).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.pg_restart import seed
from bench.stack import (
    ThrowawayPostgres,
    ThrowawayRedis,
    app_env,
    free_port,
    manage,
    start_beat,
    start_web,
    start_worker,
    stop,
)

PAGE = 4096


def group_rss_mb(leader: int) -> dict[int, float]:
    """Resident memory (MB) of every process in `leader`'s process group."""
    out: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[2]) != leader:  # pgrp
                continue
            out[int(entry.name)] = int(fields[21]) * PAGE / 2**20  # rss pages
        except (OSError, ValueError, IndexError):
            continue
    return out


def slope(values: list[float]) -> float:
    """Least-squares slope per sample."""
    n = len(values)
    if n < 2:
        return 0.0
    xs = range(n)
    mx, my = (n - 1) / 2, statistics.fmean(values)
    return sum((x - mx) * (y - my) for x, y in zip(xs, values, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


class Load:
    def __init__(self, base: str, sale: dict, clients: int, rate: float) -> None:
        self.base, self.sale, self.clients, self.rate = base, sale, clients, rate
        self.latencies: list[float] = []
        self.statuses: dict[int, int] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def window(self) -> tuple[list[float], dict[int, int]]:
        with self.lock:
            latencies, statuses = self.latencies, self.statuses
            self.latencies, self.statuses = [], {}
        return latencies, statuses

    def client(self, index: int) -> None:
        import httpx

        rng = random.Random(index)
        token = self.sale["tokens"][index % len(self.sale["tokens"])]
        pause = self.clients / self.rate
        with httpx.Client(
            base_url=self.base, headers={"Authorization": f"Token {token}"}, timeout=30
        ) as http:
            while not self.stop.is_set():
                seats = rng.sample(self.sale["seats"], rng.choice([1, 2]))
                body = {
                    "flightId": self.sale["flightId"],
                    "fareClass": "ECONOMY",
                    "seats": seats,
                    "exitRowConfirmed": True,  # seats may be in an exit row
                }
                started = time.perf_counter()
                try:
                    response = http.post(
                        "/api/bookings", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
                    )
                    status = response.status_code
                except httpx.HTTPError:
                    status = 0
                elapsed = time.perf_counter() - started
                with self.lock:
                    self.latencies.append(elapsed)
                    self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 201 and rng.random() < 0.35:
                    booking_id = response.json()["bookingId"]
                    time.sleep(rng.uniform(0.5, 3))
                    with contextlib.suppress(httpx.HTTPError):
                        http.delete(f"/api/bookings/{booking_id}")
                self.stop.wait(rng.uniform(0.5, 1.5) * pause)


def database_numbers(url: str, flight_id: int) -> dict:
    import psycopg

    with psycopg.connect(url.replace("postgres://", "postgresql://")) as conn:
        connections = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'seatkeeper'"
        ).fetchone()[0]
        backlog = conn.execute(
            "SELECT count(*) FROM bookings_outboxevent WHERE published_at IS NULL"
        ).fetchone()[0]
        by_status = dict(
            conn.execute(
                "SELECT status, count(*) FROM bookings_booking WHERE flight_id = %s "
                "GROUP BY status",
                [flight_id],
            ).fetchall()
        )
    return {"connections": connections, "outboxBacklog": backlog, "bookings": by_status}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--sample-seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--rate", type=float, default=5.0, help="holds per second, in total")
    parser.add_argument("--hold-ttl", type=int, default=20, help="seconds")
    args = parser.parse_args()

    import tempfile

    logs = Path(tempfile.mkdtemp(prefix="sk-soak-"))
    with ThrowawayPostgres() as pg, ThrowawayRedis() as redis:
        env = app_env(pg.url, redis.url, HOLD_TTL_SECONDS=str(args.hold_ttl))
        manage(env, "migrate", "--noinput")
        sale = seed(env, args.clients, 30)
        port = free_port()
        procs = {
            "web": start_web(env, port, logs / "web.log"),
            "worker": start_worker(env, logs / "worker.log"),
            "beat": start_beat(env, logs / "beat.log"),
        }
        load = Load(f"http://127.0.0.1:{port}", sale, args.clients, args.rate)
        threads = [threading.Thread(target=load.client, args=(i,)) for i in range(args.clients)]
        for thread in threads:
            thread.start()
        samples = []
        started = time.monotonic()
        try:
            while time.monotonic() - started < args.minutes * 60:
                time.sleep(args.sample_seconds)
                latencies, statuses = load.window()
                memory = {role: group_rss_mb(p.pid) for role, p in procs.items()}
                db = database_numbers(pg.url, sale["flightId"])
                try:
                    manage(env, "check_inventory")
                    clean = True
                except RuntimeError:
                    clean = False
                latencies.sort()
                p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000 if latencies else 0.0
                sample = {
                    "t": round(time.monotonic() - started),
                    "rssMb": {r: round(sum(m.values()), 1) for r, m in memory.items()},
                    "processes": {r: len(m) for r, m in memory.items()},
                    "connections": db["connections"],
                    "p99ms": round(p99, 1),
                    "requests": sum(statuses.values()),
                    "statuses": statuses,
                    "outboxBacklog": db["outboxBacklog"],
                    "bookings": db["bookings"],
                    "inventoryClean": clean,
                }
                samples.append(sample)
                print(sample, flush=True)
        finally:
            load.stop.set()
            for thread in threads:
                thread.join()
            for process in procs.values():
                stop(process)

    steady = samples[1:] if len(samples) > 2 else samples
    print("\n--- trend over the samples after warm-up (per sample) ---")
    verdicts = []
    series = {
        **{f"rss {r} MB": [s["rssMb"][r] for s in steady] for r in ("web", "worker", "beat")},
        "db connections": [s["connections"] for s in steady],
        "p99 ms": [s["p99ms"] for s in steady],
        "outbox backlog": [s["outboxBacklog"] for s in steady],
    }
    for name, values in series.items():
        per_sample = slope(values)
        mean = statistics.fmean(values) if values else 0
        # Growth: the fitted line rises by more than 10 % of the mean over the run (and by
        # more than noise-level absolute amounts).
        total = per_sample * max(len(values) - 1, 1)
        floor = {"db connections": 3, "outbox backlog": 20, "p99 ms": 50}.get(name, 5)
        grows = total > max(0.10 * mean, floor)
        verdicts.append(grows)
        print(f"{name:20s} mean {mean:9.1f}  slope {per_sample:+8.2f}/sample  "
              f"{'GROWS' if grows else 'flat'}")  # fmt: skip
    invariants = all(s["inventoryClean"] for s in samples)
    print(f"invariants clean in every sample: {invariants}")
    errors = sum(v for s in samples for k, v in s["statuses"].items() if k == 0 or k >= 500)
    print(f"5xx / connection errors: {errors}")
    print(
        "VERDICT: "
        + ("no growth trend" if not any(verdicts) and invariants else "GROWTH OR DRIFT: look above")
    )


if __name__ == "__main__":
    main()
