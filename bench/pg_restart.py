"""PostgreSQL restarted in the middle of a flash sale (issue 17's measurement).

    .venv/bin/python bench/pg_restart.py                       # 100 clients, restart 6 s in
    .venv/bin/python bench/pg_restart.py --clients 30 --restart-at 3 --duration 12
    .venv/bin/python bench/pg_restart.py --no-retry            # control: no key, no retry

Starts its own PostgreSQL cluster (initdb in a temp dir, free port), its own Redis and
Seatkeeper under uvicorn; N clients hold one seat after another (each with a fresh
Idempotency-Key, retrying 5xx and dropped connections with the same key, as the API schema
tells them to); `pg_ctl restart -m fast` hits the cluster `--restart-at` seconds in.
Prints the answers by status, the number of 500s, and the ghost holds: units held in the
database by bookings no client was told about.  Everything is removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import (
    PYTHON,
    ROOT,
    ThrowawayPostgres,
    ThrowawayRedis,
    app_env,
    free_port,
    manage,
    start_web,
    stop,
)


@dataclass
class SaleReport:
    statuses: Counter = field(default_factory=Counter)
    connection_errors: int = 0
    replayed: int = 0
    told: set[int] = field(default_factory=set)
    held_units: int = 0
    booked_ids: set[int] = field(default_factory=set)
    inventory_clean: bool = False
    restart_seconds: float = 0.0
    sale_started: float = 0.0
    odd_answers: list[str] = field(default_factory=list)

    @property
    def server_errors(self) -> int:
        return self.statuses[500]

    @property
    def ghost_holds(self) -> int:
        return len(self.booked_ids - self.told)

    def summary(self) -> dict:
        return {
            "answers": dict(sorted(self.statuses.items())),
            "connectionErrors": self.connection_errors,
            "replayed": self.replayed,
            "500": self.server_errors,
            "bookingsToldAbout": len(self.told),
            "unitsHeld": self.held_units,
            "ghostHolds": self.ghost_holds,
            "inventoryClean": self.inventory_clean,
            "restartSeconds": round(self.restart_seconds, 2),
            "saleStartedAfterSeconds": round(self.sale_started, 1),
            "oddAnswers": self.odd_answers,
        }


def seed(env: dict, clients: int, rows: int) -> dict:
    import subprocess

    out = subprocess.run(
        [PYTHON, str(ROOT / "bench" / "seed.py"), "--clients", str(clients), "--rows", str(rows)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def client_loop(
    base: str,
    token: str,
    flight_id: int,
    seats: list[str],
    *,
    end: list[float],
    retry: bool,
    seed_: int,
    report: SaleReport,
    lock: threading.Lock,
) -> None:
    import httpx

    rng = random.Random(seed_)
    order = seats[:]
    rng.shuffle(order)
    headers = {"Authorization": f"Token {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=15) as http:
        for seat in order:
            if time.monotonic() > end[0]:
                return
            key = uuid.uuid4().hex if retry else None
            body = {
                "flightId": flight_id,
                "fareClass": "ECONOMY",
                "seats": [seat],
                "exitRowConfirmed": True,  # a seat may be in an exit row
            }
            for _attempt in range(60):
                try:
                    response = http.post(
                        "/api/bookings", json=body, headers={"Idempotency-Key": key} if key else {}
                    )
                except httpx.HTTPError:
                    with lock:
                        report.connection_errors += 1
                    if not retry:
                        break
                    time.sleep(0.5)
                    continue
                with lock:
                    report.statuses[response.status_code] += 1
                    if response.headers.get("Idempotent-Replayed"):
                        report.replayed += 1
                if response.status_code == 201:
                    with lock:
                        report.told.add(response.json()["bookingId"])
                    break
                if response.status_code >= 400 and response.status_code != 409:
                    with lock:
                        if len(report.odd_answers) < 10:
                            report.odd_answers.append(
                                f"{response.status_code} {response.text[:200]}"
                            )
                if response.status_code >= 500 and retry:
                    time.sleep(float(response.headers.get("Retry-After", "1")))
                    continue
                if response.status_code == 409 and "idempotency-key-in-flight" in response.text:
                    time.sleep(0.5)  # the first attempt (its connection timed out) still runs
                    continue
                if response.status_code == 409 and "sold-out" in response.text:
                    return
                break
            time.sleep(rng.uniform(0.1, 0.5))


def run(
    *,
    clients: int = 100,
    restart_at: float = 6.0,
    duration: float = 20.0,
    rows: int = 90,
    retry: bool = True,
    workers: int = 2,
    log_dir: Path | None = None,
) -> SaleReport:
    import psycopg

    report = SaleReport()
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="sk-bench-"))
    with ThrowawayPostgres() as pg, ThrowawayRedis() as redis:
        env = app_env(pg.url, redis.url, OUTBOX_KICK_ON_COMMIT="false")
        manage(env, "migrate", "--noinput")
        sale = seed(env, clients, rows)
        port = free_port()
        web = start_web(env, port, log_dir / "web.log", workers=workers)
        try:
            lock = threading.Lock()
            start = time.monotonic()
            deadline = [start + 600]  # set to `duration` after the sale starts
            threads = [
                threading.Thread(
                    target=client_loop,
                    args=(f"http://127.0.0.1:{port}", token, sale["flightId"], sale["seats"]),
                    kwargs={
                        "end": deadline,
                        "retry": retry,
                        "seed_": i,
                        "report": report,
                        "lock": lock,
                    },
                )
                for i, token in enumerate(sale["tokens"])
            ]
            for thread in threads:
                thread.start()
            # The clock starts with the sale: the first hold answered (workers booted).
            while not report.told and time.monotonic() < start + 300:
                time.sleep(0.05)
            report.sale_started = time.monotonic() - start
            deadline[0] = time.monotonic() + duration
            time.sleep(restart_at)
            began = time.monotonic()
            pg.restart()
            report.restart_seconds = time.monotonic() - began
            for thread in threads:
                thread.join()
        finally:
            stop(web)
        with psycopg.connect(pg.url.replace("postgres://", "postgresql://")) as conn:
            report.booked_ids = {
                row[0]
                for row in conn.execute(
                    "SELECT id FROM bookings_booking WHERE sale_id = %s AND status = 'HELD'",
                    [sale["flightId"]],
                )
            }
            report.held_units = conn.execute(
                "SELECT held FROM bookings_inventory WHERE sale_id = %s AND fare_class = 'ECONOMY'",
                [sale["flightId"]],
            ).fetchone()[0]
        try:
            manage(env, "check_inventory")
            report.inventory_clean = True
        except RuntimeError:
            report.inventory_clean = False
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--restart-at", type=float, default=6.0)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--rows", type=int, default=90, help="economy rows (at most 99)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-retry", action="store_true", help="control: no key, no retry")
    args = parser.parse_args()
    report = run(
        clients=args.clients,
        restart_at=args.restart_at,
        duration=args.duration,
        rows=args.rows,
        retry=not args.no_retry,
        workers=args.workers,
    )
    summary = report.summary()
    print(json.dumps(summary, indent=2))
    print(f"500 answers: {summary['500']}")
    print(
        f"ghost holds: {summary['ghostHolds']} (units held {summary['unitsHeld']}, "
        f"bookings clients were told about {summary['bookingsToldAbout']})"
    )


if __name__ == "__main__":
    main()
