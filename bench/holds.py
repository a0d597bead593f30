"""Hold throughput and latency with N threads contending on one flight.

    .venv/bin/python bench/holds.py                 # defaults: 32 threads, 3 scenarios
    .venv/bin/python bench/holds.py --threads 64 --flights 1
    .venv/bin/python bench/holds.py --filters on    # Redis seat gate + availability counter

Runs against PostgreSQL (BENCH_DATABASE_URL, default a scratch database `seatkeeper_bench` on
127.0.0.1), never against your data.  Each thread has its own connection, like a web worker.
`--filters` puts the Redis hold filters (flights/availability.py) in front of the hold, on
BENCH_REDIS_URL (default REDIS_URL, else redis://127.0.0.1:6379/0); the default `off` is the
hold as PostgreSQL alone runs it.
Scenarios:
  seat-pairs   every thread holds random adjacent pairs on the same flight until it sells out
  one-seat     every thread fights for the same seat (1 winner, the rest must get 409 fast)
  seatless     every thread holds 1 seatless unit until capacity + overbook is gone
  sold-out     every thread asks 40 times for a unit of a fare class already sold out
Prints holds/s (successful), attempts/s, p50/p99 latency of all attempts and of the losers,
and the hot-row lock window of the winners: from the end of the conditional
`UPDATE bookings_inventory` (the row lock is held from then on) to the end of its COMMIT
(measured in the worker: an execute wrapper and an on_commit callback, so a lower bound).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/seatkeeper_bench"
)
os.environ["DATABASE_URL"] = BENCH_URL
BENCH_REDIS_URL = os.environ.get(
    "BENCH_REDIS_URL", os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
)
os.environ.pop("REDIS_URL", None)
FILTERS = {
    "off": (False, False),
    "gate": (True, False),
    "counter": (False, True),
    "on": (True, True),
}


def configure_filters(mode: str) -> None:
    """Before django.setup(): the settings read these once."""
    gate, counter = FILTERS[mode]
    os.environ["HOLD_FILTERS_REDIS_URL"] = BENCH_REDIS_URL if gate or counter else ""
    os.environ["HOLD_SEAT_GATE"] = str(int(gate))
    os.environ["HOLD_AVAILABILITY_COUNTER"] = str(int(counter))


def ensure_database() -> None:
    import psycopg

    name = BENCH_URL.rsplit("/", 1)[1]
    with psycopg.connect(BENCH_URL, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def lock_window_timer(windows: list[float]):
    """An execute wrapper: for every fare-inventory UPDATE that won inside a transaction,
    record the seconds from its return to the end of the COMMIT (on_commit runs after it)."""
    from django.db import transaction

    def wrapper(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.startswith('UPDATE "bookings_inventory"') and context["cursor"].rowcount:
            connection = context["connection"]
            if connection.in_atomic_block:
                held_from = time.perf_counter()
                transaction.on_commit(
                    lambda: windows.append(time.perf_counter() - held_from),
                    using=connection.alias,
                )
        return result

    return wrapper


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(
    name: str,
    workers: int,
    attempt,
    *,
    stop_after_failures: int,
    processes: bool,
    counters=None,
) -> dict:
    """Run `workers` competitors (threads, or forked processes with their own interpreter).

    A worker stops after `stop_after_failures` lost attempts in a row, or when `attempt`
    raises StopIteration (it has nothing left to try; not counted).  `counters(index)`, if
    given, returns a worker's own tallies ({name: n}) at its end; they are summed."""
    import multiprocessing

    from django.db import connections

    from kernel.errors import DomainError

    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(workers) if processes else threading.Barrier(workers)
    results = ctx.SimpleQueue() if processes else None
    collected: list[dict] = []

    def worker(index: int) -> None:
        rng = random.Random(index)
        latencies: list[float] = []
        lost: list[float] = []
        won: list[float] = []
        wins, errors, failures_in_a_row = 0, {}, 0
        windows: list[float] = []
        connections["default"].ensure_connection()
        connections["default"].execute_wrappers.append(lock_window_timer(windows))
        barrier.wait()
        try:
            while failures_in_a_row < stop_after_failures:
                started = time.perf_counter()
                try:
                    attempt(index, rng)
                    ok, kind = True, None
                except StopIteration:
                    break
                except DomainError as exc:
                    ok, kind = False, type(exc).__name__
                latencies.append(time.perf_counter() - started)
                if ok:
                    wins += 1
                    won.append(latencies[-1])
                else:
                    lost.append(latencies[-1])
                    errors[kind] = errors.get(kind, 0) + 1
                failures_in_a_row = 0 if ok else failures_in_a_row + 1
        finally:
            connections.close_all()
        outcome = {
            "latencies": latencies,
            "lost": lost,
            "won": won,
            "wins": wins,
            "errors": errors,
            "windows": windows,
            "counters": counters(index) if counters else {},
        }
        if processes:
            results.put(outcome)
        else:
            collected.append(outcome)

    connections.close_all()  # never share a connection across fork
    if processes:
        pool = [ctx.Process(target=worker, args=(i,)) for i in range(workers)]
    else:
        pool = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    started = time.perf_counter()
    for p in pool:
        p.start()
    if processes:
        collected = [results.get() for _ in pool]
    for p in pool:
        p.join()
    wall = time.perf_counter() - started
    latencies = [x for c in collected for x in c["latencies"]]
    lost = [x for c in collected for x in c["lost"]]
    won = [x for c in collected for x in c["won"]]
    windows = [x for c in collected for x in c["windows"]]
    errors: dict[str, int] = {}
    tallies: dict[str, int] = {}
    for c in collected:
        for kind, n in c["errors"].items():
            errors[kind] = errors.get(kind, 0) + n
        for kind, n in c["counters"].items():
            tallies[kind] = tallies.get(kind, 0) + n
    wins = sum(c["wins"] for c in collected)
    return {
        "scenario": name,
        "holds": wins,
        "attempts": len(latencies),
        "wall_s": wall,
        "holds_per_s": wins / wall,
        "attempts_per_s": len(latencies) / wall,
        "p50_ms": percentile(latencies, 0.50) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
        "lost_p50_ms": percentile(lost, 0.50) * 1000 if lost else float("nan"),
        "lost_p99_ms": percentile(lost, 0.99) * 1000 if lost else float("nan"),
        "won_p50_ms": percentile(won, 0.50) * 1000 if won else float("nan"),
        "won_p99_ms": percentile(won, 0.99) * 1000 if won else float("nan"),
        "lock_mean_ms": statistics.fmean(windows) * 1000 if windows else float("nan"),
        "lock_p99_ms": percentile(windows, 0.99) * 1000 if windows else float("nan"),
        "errors": errors,
        "counters": tallies,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=32, help="competitors on the flight")
    parser.add_argument(
        "--processes",
        action="store_true",
        help="fork one process per competitor (like separate web workers) instead of threads",
    )
    parser.add_argument("--scenarios", default="seat-pairs,one-seat,seatless")
    parser.add_argument(
        "--filters",
        choices=sorted(FILTERS),
        default="off",
        help="Redis hold filters: off, gate, counter, or on (both)",
    )
    parser.add_argument(
        "--buckets",
        type=int,
        default=1,
        help="seatless: spread the 171 units over N inventory rows (the hot-row bucket bound)",
    )
    args = parser.parse_args()

    ensure_database()
    configure_filters(args.filters)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections

    from bookings.customer_holds import hold_seatless, hold_seats
    from bookings.errors import SoldOut
    from flights.demo import AIRPORTS
    from flights.models import Airport, FareInventory
    from flights.services import check_inventory, create_flight, set_fare_limits

    call_command("migrate", verbosity=0)
    for code, name, city, country, tz in AIRPORTS[:2]:
        Airport.objects.get_or_create(
            code=code, defaults={"name": name, "city": city, "country": country, "time_zone": tz}
        )
    origin, destination = Airport.objects.order_by("code")[:2]
    users = [
        get_user_model().objects.get_or_create(username=f"bench{i}")[0] for i in range(args.threads)
    ]

    def new_flight():
        from datetime import timedelta

        from django.utils import timezone

        departure = timezone.now() + timedelta(days=10, seconds=random.randint(0, 10**6))
        return create_flight(
            code="BN1",
            origin=origin,
            destination=destination,
            departure_at=departure,
            arrival_at=departure + timedelta(hours=2),
        )

    kind = "processes" if args.processes else "threads"
    print(
        f"PostgreSQL hold bench: {args.threads} {kind}, a fresh A320 per scenario "
        f"(economy 168 seats + 3 overbook), Redis filters {args.filters}, "
        f"seatless rows {args.buckets}"
    )
    print(
        f"{'scenario':<12}{'holds':>7}{'attempts':>10}{'holds/s':>10}{'attempts/s':>12}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'lost p50':>10}{'lost p99':>10}"
        f"{'lock mean':>10}{'lock p99':>10}  errors"
    )
    for scenario in args.scenarios.split(","):
        flight = new_flight()
        if scenario == "seat-pairs":
            pairs = [
                [f"{row}{a}", f"{row}{b}"] for row in range(4, 32) for a, b in ("AB", "CD", "EF")
            ]

            def attempt(i, rng, flight=flight, pairs=pairs):
                hold_seats(
                    customer=users[i],
                    sale_id=flight.sale_id,
                    fare_class="ECONOMY",
                    seat_numbers=rng.choice(pairs),
                )

            result = run(
                scenario, args.threads, attempt, stop_after_failures=40, processes=args.processes
            )
        elif scenario == "one-seat":

            def attempt(i, rng, flight=flight):
                hold_seats(
                    customer=users[i],
                    sale_id=flight.sale_id,
                    fare_class="ECONOMY",
                    seat_numbers=["12A"],
                )

            result = run(
                scenario, args.threads, attempt, stop_after_failures=20, processes=args.processes
            )
            assert result["holds"] == 1, result
        elif scenario == "seatless" and args.buckets > 1:
            # The hot row split N ways, as hot-row buckets would split it: the same 171 units
            # spread over N fare-inventory rows (N flights), each hold trying a random row
            # with units left.  An upper bound for real buckets, which would add a query to
            # pick a bucket with room and a sum wherever the total is read.
            rows = [flight] + [new_flight() for _ in range(args.buckets - 1)]
            for k, row in enumerate(rows):
                inv = FareInventory.objects.get(flight=row, fare_class="ECONOMY")
                share = 171 // args.buckets + (1 if k < 171 % args.buckets else 0)
                set_fare_limits(
                    inventory_id=inv.pk, capacity=share, overbook_limit=0, price=inv.price
                )

            def attempt(i, rng, rows=rows):
                for row in rng.sample(rows, len(rows)):
                    try:
                        return hold_seatless(
                            customer=users[i],
                            sale_id=row.sale_id,
                            fare_class="ECONOMY",
                            passengers=1,
                        )
                    except SoldOut:
                        continue
                raise SoldOut("ECONOMY")

            result = run(
                scenario, args.threads, attempt, stop_after_failures=5, processes=args.processes
            )
            assert result["holds"] == 171, result
        elif scenario == "seatless":

            def attempt(i, rng, flight=flight):
                hold_seatless(
                    customer=users[i], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
                )

            result = run(
                scenario, args.threads, attempt, stop_after_failures=5, processes=args.processes
            )
            assert result["holds"] == 171, result
        elif scenario == "sold-out":
            while True:  # sell the economy class out before the clock starts
                try:
                    hold_seatless(
                        customer=users[0],
                        sale_id=flight.sale_id,
                        fare_class="ECONOMY",
                        passengers=9,
                    )
                except SoldOut:
                    break

            def attempt(i, rng, flight=flight):
                hold_seatless(
                    customer=users[i], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
                )

            result = run(
                scenario, args.threads, attempt, stop_after_failures=40, processes=args.processes
            )
            assert result["holds"] == 0, result
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        audited = rows if scenario == "seatless" and args.buckets > 1 else [flight]
        problems = [p for row in audited for p in check_inventory(sale_id=row.sale_id)]
        assert not problems, problems
        print(
            f"{scenario:<12}{result['holds']:>7}{result['attempts']:>10}{result['holds_per_s']:>10.0f}"
            f"{result['attempts_per_s']:>12.0f}{result['p50_ms']:>9.1f}{result['p99_ms']:>9.1f}"
            f"{result['lost_p50_ms']:>10.1f}{result['lost_p99_ms']:>10.1f}"
            f"{result['lock_mean_ms']:>10.1f}{result['lock_p99_ms']:>10.1f}  {result['errors']}"
        )
    connections.close_all()


if __name__ == "__main__":
    main()
