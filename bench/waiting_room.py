"""A flash sale through the waiting room, against a real running stack.

    .venv/bin/python bench/waiting_room.py                       # 2,000 customers, 183 units
    .venv/bin/python bench/waiting_room.py --customers 500 --rate 900
    .venv/bin/python bench/waiting_room.py --filters on          # one side only
    .venv/bin/python bench/waiting_room.py --customers 20 --rows 2 --bots 2 --timeout 20  # smoke
    .venv/bin/python bench/waiting_room.py --scenario bots        # issue 30: work paid
    .venv/bin/python bench/waiting_room.py --scenario adaptive    # issue 30: rate vs health
    .venv/bin/python bench/waiting_room.py --scenario sold-out --sockets 2000 --ws-workers 2

By default the sale runs twice in one sitting, with the Redis hold filters (seat gate and
availability counter, flights/availability.py) on and then off, each on a fresh stack, flight
and crowd, and the figures are printed side by side.  `bench/flash_sale.py --scenarios w`
runs the same sale (this module's code) on the flash-sale bench's production-shaped stack.

What it starts (and stops): uvicorn (`config.asgi`) and a Celery worker with embedded beat
(the admission tick every 2 s, the outbox relay) on free ports, against a scratch database
`seatkeeper_bench_wr` (BENCH_DATABASE_URL) and Redis db 9 (BENCH_REDIS_URL, flushed first:
it belongs to this bench).

The crowd (asyncio, one process): every customer joins the queue over the REST API before
the on-sale time (the pre-queue), opens the queue websocket and waits.  When admitted (the
websocket says so and carries the token) they fetch the seat map and hold one seat
(`X-Waiting-Room-Token`), retrying another seat on 409, or a seatless unit once the seats are
gone.  A few "bots" try to hold without queueing at the on-sale time.

Prints: time to sell out (all units held), the hold p50/p99 of admitted shoppers,
websocket position updates per second, and the proof that nobody beyond the inventory
horizon reached a hold: every booking belongs to an admitted customer within their stay,
and at every admission tick those shopping inside were within 1.5 x the units left.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.waiting_room_crowd import Figures, cpu_seconds, crowd  # noqa: E402, F401
from bench.waiting_room_report import (  # noqa: E402, F401
    percentile,
    pooled_figures,
    print_pooled,
    report,
    side_by_side,
    summary,
    verify,
)
from bench.waiting_room_stack import (  # noqa: E402, F401
    BENCH_REDIS,
    BENCH_URL,
    FILTER_MODES,
    SERVER_ENV,
    ensure_database,
    free_port,
    start_stack,
    stop_stack,
)

# --- the data ------------------------------------------------------------------------------


@dataclass
class Customer:
    id: int
    api_token: str
    session: str


def prepare(n: int, *, opens_in: float, rate: int, max_inside: int, stay: int, rows: int = 30):
    """A protected sale of a fresh flight (rows x 6 seats + 3 overbooking units: 183 for 30
    rows) and `n` fresh customers with API tokens and sessions, in the database this process
    is set up with (the stack's)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.sessions.backends.db import SessionStore
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from tests.factories import FlightFactory, economy_only_layout
    from waitroom import staff

    User = get_user_model()
    tag = f"{time.time_ns()}"
    flight = FlightFactory(layout=economy_only_layout(rows=rows, overbook_limit=3))
    password = make_password(None)
    User.objects.bulk_create(
        [User(username=f"wr{tag}-{i}", password=password) for i in range(n)], batch_size=1000
    )
    users = list(User.objects.filter(username__startswith=f"wr{tag}-").order_by("id"))
    Token.objects.bulk_create([Token(user=u, key=Token.generate_key()) for u in users])
    tokens = dict(Token.objects.filter(user__in=users).values_list("user_id", "key"))
    customers = []
    for u in users:
        session = SessionStore()
        session["_auth_user_id"] = str(u.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = u.get_session_auth_hash()
        session.create()
        customers.append(Customer(u.pk, tokens[u.pk], session.session_key))
    sale = staff.open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() + timedelta(seconds=opens_in),
        admit_per_minute=rate,
        max_inside=max_inside,
        stay_seconds=stay,
    )
    return flight, sale, customers


# --- one sale, reported --------------------------------------------------------------------


@dataclass
class SaleSettings:
    customers: int = 2000
    rows: int = 30  # 30 x 6 seats + 3 overbooking units = 183
    rate: int = 600  # admissions per minute
    max_inside: int = 100
    stay: int = 60  # seconds
    bots: int = 50
    timeout: float = 300.0
    arrive: float = 600.0


def run_sale(base_url: str, config: SaleSettings, probe=None, ws_url: str | None = None) -> dict:
    """Prepare a protected sale and its crowd in the stack's database, run the crowd against
    the stack at `base_url`, and prove the result.  The stack (web + worker with beat) must be
    up; its filters are whatever its environment says."""
    flight, sale, customers = prepare(
        config.customers,
        opens_in=3600,  # set for real once the crowd is in
        rate=config.rate,
        max_inside=config.max_inside,
        stay=config.stay,
        rows=config.rows,
    )
    from waitroom.models import WaitingRoom

    try:
        figures, sold_out_after, server_cpu = asyncio.run(
            crowd(
                base_url,
                sale,
                flight,
                customers,
                bots=config.bots,
                timeout=config.timeout,
                arrive=config.arrive,
                probe=probe,
                ws_url=ws_url,
            )
        )
        slowest = max(figures.hold_latencies, default=0.0)
        proof = verify(sale, flight, in_flight=timedelta(seconds=slowest))
    finally:
        # Close this sale, even when the run is interrupted: otherwise every later run's
        # admission tick (same database) would keep ticking it, admitting its leftover
        # queue, and measure that too (an interrupted run left one: 1 Dec, run 4).
        WaitingRoom.objects.filter(pk=sale.pk).delete()
    return {
        "figures": figures,
        "sold_out_after": sold_out_after,
        "proof": proof,
        "server_cpu": server_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = SaleSettings()
    parser.add_argument("--customers", type=int, default=defaults.customers)
    parser.add_argument(
        "--rows", type=int, default=defaults.rows, help="rows of 6 seats (+3 overbooking units)"
    )
    parser.add_argument("--rate", type=int, default=defaults.rate, help="admissions per minute")
    parser.add_argument("--max-inside", type=int, default=defaults.max_inside)
    parser.add_argument("--stay", type=int, default=defaults.stay, help="seconds")
    parser.add_argument(
        "--arrive",
        type=float,
        default=defaults.arrive,
        help="the sale opens once every customer joined and connected, or after this long",
    )
    parser.add_argument(
        "--bots", type=int, default=defaults.bots, help="holds tried without queueing"
    )
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every side this many times and print the hold latency pooled over them",
    )
    parser.add_argument(
        "--ws-workers",
        type=int,
        default=1,
        help="serve the queue websockets from a separate uvicorn with this many workers, "
        "as docker-compose.yml's `ws` service does (0: the web workers serve them too)",
    )
    parser.add_argument(
        "--admission-steps",
        type=int,
        default=None,
        help="WAITING_ROOM_ADMISSION_STEPS for the server (1 = a whole tick's batch at once)",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (JSON, with its request id and server-side duration) to "
        "test-artifacts/bench-wr-uvicorn.log: costs CPU, for finding out, not for figures",
    )
    parser.add_argument("--timeout", type=float, default=defaults.timeout)
    parser.add_argument("--save", help="write the side-by-side figures to this JSON file")
    parser.add_argument(
        "--filters",
        choices=["both", "on", "off"],
        default="both",
        help="the Redis hold filters: both = on, then off, printed side by side",
    )
    parser.add_argument(
        "--scenario",
        choices=["sale", "bots", "adaptive", "sold-out"],
        default="sale",
        help="issue 30's scenarios (bench/waiting_room_scenarios.py); sale: the flash sale",
    )
    parser.add_argument("--sockets", type=int, default=2000, help="sold-out: waiting websockets")
    parser.add_argument(
        "--clients", type=int, default=2, help="sold-out: client processes holding the sockets"
    )
    parser.add_argument(
        "--sold-out-rounds",
        help="sold-out: rounds in one sitting, WS:CLIENTS[:nodeflate],... (WS 0: web serves)",
    )
    parser.add_argument(
        "--profile", action="store_true", help="sold-out: py-spy the socket workers (raw stacks)"
    )
    args = parser.parse_args()
    config = SaleSettings(
        customers=args.customers,
        rows=args.rows,
        rate=args.rate,
        max_inside=args.max_inside,
        stay=args.stay,
        bots=args.bots,
        timeout=args.timeout,
        arrive=args.arrive,
    )

    os.environ["DATABASE_URL"] = BENCH_URL
    os.environ["REDIS_URL"] = BENCH_REDIS
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    ensure_database()
    import logging

    import django
    from django.core.management import call_command

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)
    if args.scenario != "sale":
        import redis

        from bench import waiting_room_scenarios as scenarios

        redis.Redis.from_url(BENCH_REDIS).flushdb()  # db 9 belongs to this bench
        if args.scenario == "bots":
            scenarios.bots()
        elif args.scenario == "adaptive":
            scenarios.adaptive()
        else:
            from bench.waiting_room_sold_out import Round, sold_out

            specs = (args.sold_out_rounds or f"{args.ws_workers}:{args.clients}").split(",")
            rounds = [Round.parse(spec) for spec in specs]
            sold_out(
                args.sockets, web_workers=args.web_workers, rounds=rounds, profile=args.profile
            )
        return
    modes = ["on", "off"] if args.filters == "both" else [args.filters]
    rounds: list[dict[str, dict]] = []
    for round_no in range(1, args.repeat + 1):
        if args.repeat > 1:
            print(f"round {round_no} of {args.repeat}", flush=True)
        results = {mode: one_side(args, config, mode) for mode in modes}
        if len(results) > 1:
            side_by_side(results)
        rounds.append(results)
    pooled = {
        mode: [x for results in rounds for x in results[mode]["figures"].hold_latencies]
        for mode in modes
    }
    if args.repeat > 1:
        print_pooled(pooled, args.repeat)
    if args.save:
        saved = {
            "argv": sys.argv[1:],
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "results": {mode: summary(result) for mode, result in rounds[-1].items()},
            "rounds": [{mode: summary(r) for mode, r in results.items()} for results in rounds],
            "pooled": pooled_figures(pooled),
            "hold_latencies_ms": {
                mode: [round(x * 1000, 1) for x in lat] for mode, lat in pooled.items()
            },
        }
        Path(args.save).write_text(json.dumps(saved, indent=2) + "\n")


def one_side(args, config: SaleSettings, mode: str) -> dict:
    """One sale with the filters `on` or `off`, on a stack of its own, reported."""
    import redis

    # A clean slate per side: queues, counters and seat gates of the other run are gone.
    redis.Redis.from_url(BENCH_REDIS).flushdb()
    print(f"filters {mode}: preparing {args.customers} customers ...", flush=True)
    port = free_port()
    started = time.time()
    extra = dict(FILTER_MODES[mode])
    if args.access_log:
        extra.update(LOG_LEVEL="INFO", LOG_FORMAT="json")
    if args.admission_steps is not None:
        extra["WAITING_ROOM_ADMISSION_STEPS"] = str(args.admission_steps)
    ws_port = free_port() if args.ws_workers else None
    stack = start_stack(port, args.web_workers, extra, ws_port, args.ws_workers)
    try:
        print(f"  ready in {time.time() - started:.1f} s; the crowd arrives", flush=True)
        named = {"uvicorn": stack[0], "celery": stack[1]}
        if ws_port:
            named["uvicorn (websockets)"] = stack[2]
        result = run_sale(
            f"http://127.0.0.1:{port}",
            config,
            probe=lambda named=named: cpu_seconds(named),
            ws_url=f"http://127.0.0.1:{ws_port}" if ws_port else None,
        )
    finally:
        stop_stack(stack)
    report(result, config, label=f"filters {mode}")
    return result


if __name__ == "__main__":
    main()
