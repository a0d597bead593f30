"""A flash sale against the production-shaped stack, measured against PostgreSQL's own ceiling.

    .venv/bin/python bench/flash_sale.py                          # all scenarios, this checkout
    .venv/bin/python bench/flash_sale.py --quick --scenarios a,d  # smaller, faster
    .venv/bin/python bench/flash_sale.py --checkout /work/wt/speed-before --save before.json
    .venv/bin/python bench/flash_sale.py --baseline before.json   # prints after/before ratios
    .venv/bin/python bench/flash_sale.py --base-url http://127.0.0.1:8000 \
        --database-url postgres://... --redis-url redis://...      # a stack already running

What it does, in one sitting:
1. Recreates a scratch database (`seatkeeper_bench_flash`) and flushes a dedicated Redis db
   (12 by default, never 0-8), migrates with the checkout's own code.
2. Starts the processes of the checkout's `docker-compose.yml` (`web`, `worker`, `beat`
   commands, run from the checkout's `.venv`) on a free port of 127.0.0.1.
3. For each scenario: a fresh demo flight (A320: ECONOMY 168 seats + 3 overbooking = 171
   units) and fresh customers with tokens; then a separate load-generator process (asyncio +
   aiohttp, bounded in requests and seconds) drives the stack over HTTP.
     a  seatless holds: 100 clients x 1,000 requests on one flight
     b  seat-picking holds: 100 clients, each tries seats in its own order, next seat on 409
     c  orders: seatless hold, then pay with the sandbox card -> CONFIRMED
     d  200 clients on one seat, all at once: exactly one winner
   (a) to (d) take --repeat N: N sales each, their CPU, wins/s and latencies pooled
     e  seat map reads: cold (first read of a flight), then warm (cached) and 304
        (If-None-Match) in four pairs of loads taken in turn, each kind pooled
     f  (only when asked: --scenarios f, e.g. a,f) best available (issue 29): 100 clients ask
        `POST /api/bookings/best-available` for the best 2 seats of category A of one fresh
        event (a seated venue, the single-seat rule on), twice each with --quick, four times
        otherwise; its holds/s beside (a)'s, and an audit on the rows: no seat in two
        bookings, every booking one block, no seat left alone that the rule forbids
        (bench/best_available_sale.py)
     o  (only when asked: --scenarios a,o) open loop: seatless holds arriving at a fixed rate
        (Poisson) at 50 % and 80 % of (a)'s measured requests/s (or, --open-loop-sustained,
        of the highest rate the stack keeps up with in short steps), p50/p99/p99.9 for
        winners and for losers counted from each arrival's scheduled time, pooled over
        --repeat runs of fresh sales (bench/open_loop.py); --open-loop-trace shows where
        the time went (bench/open_loop_trace.py)
     w  (only when asked: --scenarios w) the flash sale through the waiting room, 2,000
        customers for 183 units (bench/waiting_room.py's sale, not a copy): pre-queue,
        websocket positions, admitted shoppers hold; run twice, with the Redis hold filters
        on and off (the stack restarts with each), printed side by side
   It prints wins/s, requests/s, p50/p99 for winners and for all requests, CPU per process
   group (psutil) and the oversell audit (check_inventory + live units <= capacity+overbook).
4. pgbench with `bench/pgbench_hold.sql` (the article's hold: reserve on one hot
   fare-inventory row, insert the booking, claim a seat) at 32 clients and at the clients of
   scenario a, run alone before the stack starts (beside a --base-url stack otherwise);
   prints the ratio of (a)'s holds/s to it.
5. RSS of every web process after the runs; stops everything it started.

The fixtures and the audit use *this* checkout's models, so `--checkout` must have the same
schema (no migrations in between).  Absolute numbers depend on the machine's other load:
compare runs made one after the other.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_flash"
DEFAULT_REDIS_DB = 12


sys.path.insert(0, str(ROOT))  # run as a script: its parts are the `bench` package's
from bench.flash_sale_fixtures import (  # noqa: E402, F401  (other benches import them from here)
    audit,
    django_setup,
    new_customers,
    new_flight,
    recreate_database,
)
from bench.flash_sale_load import CARD, cpu_seconds  # noqa: E402, F401
from bench.flash_sale_reads import scenario_reads  # noqa: E402
from bench.flash_sale_scenarios import (  # noqa: E402, F401
    measured,
    ms,
    pct,
    run_load,
    run_pgbench,
    scenario_best_available,
    scenario_holds,
    scenario_one_seat,
    scenario_waiting_room,
    summarise,
)
from bench.flash_sale_stack import Stack, free_port  # noqa: E402

# --- main --------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default="a,b,c,d,e")
    parser.add_argument("--quick", action="store_true", help="fewer requests and seconds")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the code to run as the stack")
    parser.add_argument("--base-url", help="drive a stack already running there instead")
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{DEFAULT_REDIS_DB}")
    parser.add_argument("--web-workers", type=int, help="override the compose web worker count")
    parser.add_argument(
        "--web-threads", type=int, help="override the compose WEB_THREADS (HTTP threads/process)"
    )
    parser.add_argument(
        "--web-command",
        help="run this instead of the compose web command (to compare servers), e.g. "
        "'gunicorn config.wsgi -k gthread -w 2 --threads 8 -b 0.0.0.0:8000'",
    )
    parser.add_argument("--no-pgbench", action="store_true")
    parser.add_argument(
        "--hold-requests",
        type=int,
        help="(a), (b), (c): requests in all (300 with --quick, else 1,000); the sale sells "
        "out at 171, so the rest are losers",
    )
    parser.add_argument(
        "--wr-customers", type=int, default=2000, help="(w) customers in the waiting room"
    )
    parser.add_argument(
        "--wr-rows", type=int, default=30, help="(w) rows of 6 seats, +3 overbooking units"
    )
    parser.add_argument("--wr-bots", type=int, default=50, help="(w) holds tried unqueued")
    parser.add_argument("--wr-timeout", type=float, default=300.0, help="(w) seconds to sell out")
    parser.add_argument(
        "--wr-arrive", type=float, default=600.0, help="(w) longest wait for the crowd to join"
    )
    parser.add_argument(
        "--open-loop-fractions", default="0.5,0.8", help="(o) arrival rates, of (a)'s capacity"
    )
    parser.add_argument("--open-loop-seconds", type=float, default=20.0, help="(o) per rate")
    parser.add_argument(
        "--open-loop-oversubscribe", type=float, default=2.0, help="(o) arrivals per unit"
    )
    parser.add_argument(
        "--open-loop-capacity", type=float, help="(o) req/s to take fractions of, without (a)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="(o) runs per rate, latencies pooled over them; (a)-(d) sales, pooled likewise",
    )
    parser.add_argument(
        "--open-loop-mix",
        choices=("steady", "together"),
        default="steady",
        help="(o) steady: one flight on sale at a time, winners 1/oversubscribe of the "
        "arrivals all through a run; together: every flight sells out at once, all winners "
        "then all losers (before 6 Dec 2026)",
    )
    parser.add_argument(
        "--open-loop-sustained",
        action="store_true",
        help="(o) take the fractions of the highest rate the stack keeps up with, found by "
        "short open-loop steps from 60 %% of (a)'s req/s (bench/open_loop_capacity.py), not "
        "of (a)'s closed-loop burst",
    )
    parser.add_argument(
        "--open-loop-sustain-seconds", type=float, default=8.0, help="(o) per sustained step"
    )
    parser.add_argument(
        "--open-loop-trace",
        action="store_true",
        help="(o) where the time goes: the generator's send lag and new connections, each "
        "request's time before/in/after Django (the stack logs JSON), CPU per process "
        "group sampled during the run, the bench db's backends by wait event "
        "(bench/open_loop_trace.py)",
    )
    parser.add_argument(
        "--open-loop-client",
        choices=("lean", "aiohttp"),
        default="lean",
        help="(o) the load generator's HTTP client: its own lean one (bench/open_loop_client.py, "
        "about a quarter of aiohttp's CPU a request) or aiohttp (before 7 Dec 2026)",
    )
    parser.add_argument(
        "--records",
        type=Path,
        help="write each load's records (monotonic start, latency, status, won) into this "
        "directory, for bench/cpu_by_process.py's report",
    )
    parser.add_argument("--save", type=Path, help="write the figures as JSON here")
    parser.add_argument("--baseline", type=Path, help="a --save file to print ratios against")
    args = parser.parse_args()
    # This bench's own modules, before django_setup puts a --checkout (which may not have
    # them: an older commit) first on sys.path.
    sys.path.insert(0, str(ROOT))
    from bench.open_loop import scenario_open_loop

    if args.records:
        import bench.flash_sale_scenarios as scenarios

        args.records.mkdir(parents=True, exist_ok=True)
        scenarios.RECORDS_TO = args.records
    args.clients = 100
    args.requests = args.hold_requests or (300 if args.quick else 1000)
    args.one_seat_clients = 200
    args.timeout = 60 if args.quick else 180
    # (e)'s warm reads and 304s, each in 4 loads taken in turn: a load of 250 reads (0.4 s)
    # moved ±30 % on its own, a load of 750 about half that (docs/performance.md, 7 Dec).
    args.read_requests = 3000 if args.quick else 6000
    args.read_blocks = 4
    args.cold_flights = 30 if args.quick else 100
    redis_db = int(args.redis_url.rsplit("/", 1)[1] or 0)
    if redis_db <= 8 and not args.base_url:
        raise SystemExit("use a dedicated Redis db (9-15) for the bench, never 0-8")

    checkout = args.checkout.resolve()
    stack = None
    base_url = args.base_url
    print(
        f"flash sale: checkout {checkout} ({git_rev(checkout)}), scenarios {args.scenarios}"
        f"{' (quick)' if args.quick else ''}",
        flush=True,
    )
    if not base_url:
        import redis

        recreate_database(args.database_url)
        redis.Redis.from_url(args.redis_url).flushdb()
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": args.database_url,
            "REDIS_URL": args.redis_url,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            # Production mode (DEBUG off) with throw-away secrets and the sandbox on plain
            # http://127.0.0.1, so the start-up checks pass as in a local demo.
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
            "TICKET_SIGNING_KEY": secrets.token_urlsafe(48),
            "PARTNER_SECRETS_KEY": secrets.token_urlsafe(48),
            "SANDBOX_WEBHOOK_SECRET": secrets.token_urlsafe(48),
            "PAYMENTS_SANDBOX_IN_PRODUCTION": "true",
            "DJANGO_SECURE_SSL_REDIRECT": "false",
            "DJANGO_SECURE_COOKIES": "false",
            "DJANGO_SECURE_HSTS_SECONDS": "0",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}",
            "SANDBOX_WEBHOOK_URL": f"http://127.0.0.1:{port}/api/payments/webhook",
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
            "PYTHONUNBUFFERED": "1",
        }
        if args.open_loop_trace:  # the access log's duration_ms, by request id
            env["LOG_FORMAT"] = "json"
        env.pop("VIRTUAL_ENV", None)
        python = checkout / ".venv" / "bin" / "python"
        subprocess.run(
            [str(python), "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=checkout, env=env, check=True,
        )  # fmt: skip
        # PostgreSQL's ceiling alone, before the stack starts: beside it, its figure swings
        # with whatever the idle stack (beat, worker) does.
        django_setup(args.database_url, args.redis_url, checkout)
        pgbench_alone = None if args.no_pgbench else run_pgbench(args)
        stack = Stack(
            checkout=checkout,
            env=env,
            port=port,
            workers=args.web_workers,
            web_command=args.web_command,
            web_threads=args.web_threads,
        )
        stack.start()
        base_url = stack.base_url
        # Sessions made here (the waiting room's websocket logins, scenario w) are signed
        # with the secret key: the stack's.  Against --base-url, export the stack's
        # DJANGO_SECRET_KEY before running the bench.
        os.environ["DJANGO_SECRET_KEY"] = env["DJANGO_SECRET_KEY"]
    results: dict[str, Any] = {"checkout": str(checkout), "rev": git_rev(checkout)}
    if stack:
        results["pgbench"] = pgbench_alone
    try:
        if not stack:
            django_setup(args.database_url, args.redis_url, checkout)
        wanted = args.scenarios.split(",")
        titles = {
            "a": "(a) seatless holds, 100 clients",
            "b": "(b) seat-picking holds, 100 clients, next seat on 409",
            "c": "(c) orders: hold, pay with the sandbox card, CONFIRMED",
            "d": "(d) 200 clients on one seat",
            "e": "(e) seat map reads",
            "f": "(f) best available: 100 clients ask for the best 2 in category A, one event",
            "o": "(o) open loop: seatless holds arriving at a fixed rate (Poisson)",
            "w": f"(w) waiting room: {args.wr_customers} customers, "
            f"{args.wr_rows * 6 + 3} units, Redis hold filters on and off",
        }
        for key in wanted:
            print(f"\n{titles[key]}", flush=True)
            if key == "a":
                results["a"] = scenario_holds("seatless", args, stack, base_url)
            elif key == "b":
                results["b"] = scenario_holds("seats", args, stack, base_url)
            elif key == "c":
                results["c"] = scenario_holds("orders", args, stack, base_url)
            elif key == "d":
                results["d"] = scenario_one_seat(args, stack, base_url)
            elif key == "e":
                results["e"] = scenario_reads(args, stack, base_url)
            elif key == "f":
                results["f"] = scenario_best_available(args, stack, base_url)
                from bench.best_available_sale import compare_with_a

                compare_with_a(results)
            elif key == "w":
                results["w"] = scenario_waiting_room(args, stack, base_url)
            elif key == "o":
                capacity = results.get("a", {}).get("req_per_s")
                results["o"] = scenario_open_loop(args, stack, base_url, capacity)
        if not args.no_pgbench:
            if base_url == args.base_url:  # a stack we did not start: measured beside it
                results["pgbench"] = run_pgbench(args)
            if "a" in results:
                for clients, tps in results["pgbench"].items():
                    if tps:
                        print(
                            f"  (a) holds/s / pgbench tps at {clients} clients = "
                            f"{results['a']['wins_per_s'] / tps:.1%}"
                        )
        if stack:
            rss = stack.web_rss()
            results["web_rss_mb"] = rss
            print(f"\nweb processes RSS after the runs: {', '.join(f'{r:.0f} MB' for r in rss)}")
    finally:
        if stack:
            stack.stop()
            print(f"logs: {stack.logdir}")
    if args.save:
        args.save.write_text(json.dumps(results, indent=2, default=str))
    if args.baseline:
        print_ratios(json.loads(args.baseline.read_text()), results)


def git_rev(path: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return proc.stdout.strip() or "?"


def print_ratios(before: dict[str, Any], after: dict[str, Any]) -> None:
    print(f"\nthis run ({after['rev']}) against the baseline ({before['rev']}):")
    rows = [
        ("a", "wins_per_s", "holds/s", True),
        ("a", "all_p99", "all p99", False),
        ("b", "wins_per_s", "holds/s", True),
        ("c", "wins_per_s", "orders/s", True),
        ("d", "all_p99", "all p99", False),
        ("f", "wins_per_s", "holds/s", True),
    ]
    for key, field, label, higher_better in rows:
        b, a = before.get(key, {}).get(field), after.get(key, {}).get(field)
        if b and a:
            ratio = a / b if higher_better else b / a
            print(f"  ({key}) {label}: {b:.3f} -> {a:.3f}  ({ratio:.1f}x better)")
    for mode in ("cold", "warm", "not_modified"):
        b = before.get("e", {}).get(mode, {}).get("req_per_s")
        a = after.get("e", {}).get(mode, {}).get("req_per_s")
        if b and a:
            print(f"  (e) {mode} req/s: {b:.0f} -> {a:.0f}  ({a / b:.1f}x)")


if __name__ == "__main__":
    main()
