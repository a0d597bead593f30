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
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_wr"
)
BENCH_REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9")
# The Redis filters in front of the hold, as the server reads them (config/settings.py).
FILTER_MODES = {
    "on": {"HOLD_SEAT_GATE": "true", "HOLD_AVAILABILITY_COUNTER": "true"},
    "off": {"HOLD_SEAT_GATE": "false", "HOLD_AVAILABILITY_COUNTER": "false"},
}
# The whole crowd comes from 127.0.0.1, and each customer holds a handful of times at most.
SERVER_ENV = {
    "WAITING_ROOM_JOINS_PER_ADDRESS": "1000000",
    "API_THROTTLE_HOLDS": "100000/min",
    "DJANGO_DEBUG": "false",
    # Plain HTTP on 127.0.0.1: without these, DEBUG off redirects every request to https.
    "DJANGO_SECURE_SSL_REDIRECT": "false",
    "DJANGO_SECURE_COOKIES": "false",
    "DJANGO_SECURE_HSTS_SECONDS": "0",
    "LOG_LEVEL": "WARNING",
    "SANDBOX_DELIVER_WEBHOOKS": "false",
    # Keep database connections: every websocket handshake reads the session and a snapshot
    # on the one thread channels runs ORM code on; a new connection per call costs ~50 ms.
    "DB_CONN_MAX_AGE": "300",
    # This machine is shared and busy: give Redis longer before answering 503.
    "WAITING_ROOM_REDIS_TIMEOUT_SECONDS": "5",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def ensure_database() -> None:
    import psycopg

    name = BENCH_URL.rsplit("/", 1)[1]
    with psycopg.connect(BENCH_URL, dbname="postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


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


# --- the stack -----------------------------------------------------------------------------


def uvicorn(port: int, workers: int, env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--lifespan",
            "off",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def start_stack(
    port: int, workers: int, extra_env: dict[str, str], ws_port: int | None = None, ws_workers=0
) -> list[subprocess.Popen]:
    """uvicorn (HTTP, and websockets unless `ws_port`), a Celery worker with beat, and with
    `ws_port` a second uvicorn for the websockets alone (the shape where a proxy routes
    /ws/ to websocket workers: the queue sockets then never share a process with holds)."""
    env = {**os.environ, **SERVER_ENV, **extra_env}
    logs = ROOT / "test-artifacts"
    logs.mkdir(exist_ok=True)
    web = uvicorn(port, workers, env, logs / "bench-wr-uvicorn.log")
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-B",
            "--pool",
            "threads",
            "--concurrency",
            "4",
            "--hostname",
            f"bench-wr-{os.getpid()}@localhost",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(logs / "bench-wr-celerybeat"),
        ],
        cwd=ROOT,
        env=env,
        stdout=(logs / "bench-wr-celery.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    import httpx

    processes = [web, worker]
    if ws_port:
        processes.append(uvicorn(ws_port, ws_workers, env, logs / "bench-wr-uvicorn-ws.log"))
    deadline = time.monotonic() + 60
    waiting = [port, ws_port] if ws_port else [port]
    while time.monotonic() < deadline and waiting:
        try:
            if httpx.get(f"http://127.0.0.1:{waiting[0]}/healthz", timeout=2).status_code < 500:
                waiting.pop(0)
                continue
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    if not waiting:
        return processes
    stop_stack(processes)
    raise SystemExit("uvicorn did not come up; see test-artifacts/bench-wr-uvicorn.log")


def stop_stack(processes: list[subprocess.Popen]) -> None:
    import psutil

    # uvicorn's workers are its children: killing a parent stuck in a graceful shutdown
    # left them running, orphaned, busy, in every later run (found 1 Dec: two of them took
    # 11-31 % of a core each during the next runs).  End them too.
    children = []
    for p in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            children += psutil.Process(p.pid).children(recursive=True)
    for p in processes:
        p.send_signal(signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    _gone, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()


# --- the crowd -----------------------------------------------------------------------------


@dataclass
class Figures:
    joins: Counter = field(default_factory=Counter)
    position_updates: int = 0
    first_update: float | None = None
    last_update: float | None = None
    admitted: int = 0
    told_unlikely: set = field(default_factory=set)
    hold_latencies: list = field(default_factory=list)
    hold_outcomes: Counter = field(default_factory=Counter)
    holders: set = field(default_factory=set)
    bot_outcomes: Counter = field(default_factory=Counter)
    ws_errors: Counter = field(default_factory=Counter)
    connected: int = 0
    crashed: Counter = field(default_factory=Counter)
    # The load generator itself: its CPU (% of one core) and how late its event loop ran a
    # 50 ms timer (if the loop is late, client-side latencies include the generator's lag).
    generator_cpu: float = 0.0
    # The machine as a whole over the sale (everything: this bench, its stack, PostgreSQL,
    # and anyone else's work): CPU busy % of all cores, and the load average at the end.
    machine_busy: float = 0.0
    load_average: float = 0.0
    loop_lag: list = field(default_factory=list)
    sale_wall: float = 0.0
    # For finding what the slowest holds waited on: each hold as (started, seconds, outcome,
    # request id), and when the waiting pages heard each tick's broadcast (first and last
    # message of each version), both on the generator's clock.
    opened: float = 0.0
    holds: list = field(default_factory=list)
    broadcasts: dict = field(default_factory=dict)


async def watch_loop(figures: Figures, done: asyncio.Event) -> None:
    while not done.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.05)
        figures.loop_lag.append(time.perf_counter() - started - 0.05)


async def free_seats(http, base, flight_id, rng) -> list[str]:
    seat_map = (await http.get(f"{base}/api/flights/{flight_id}/seats")).json()
    free = [s["seatNo"] for s in seat_map["seats"] if s["status"] == "AVAILABLE"]
    rng.shuffle(free)
    return free


async def shop(http, base, flight_id, customer, token, figures, rng) -> None:
    """Read the seat map, hold a seat; on "seat taken" read the map again (the seat picker
    shows the fresh map after a refusal) and try another; a seatless unit once no seat is
    free.  At most 8 tries, like a patient person."""
    headers = {"Authorization": f"Token {customer.api_token}", "X-Waiting-Room-Token": token}
    free = await free_seats(http, base, flight_id, rng)
    for _attempt in range(8):
        body = {"flightId": flight_id, "fareClass": "ECONOMY", "exitRowConfirmed": True}
        if free:
            body["seats"] = [free.pop()]
        else:
            body["passengers"] = 1
        started = time.perf_counter()
        response = await http.post(f"{base}/api/bookings", json=body, headers=headers)
        figures.hold_latencies.append(time.perf_counter() - started)
        kind = response.status_code
        if kind != 201:
            kind = f"{kind} {response.json().get('type', '').rsplit('/', 1)[-1]}"
        figures.hold_outcomes[kind] += 1
        figures.holds.append(
            (
                started - figures.opened,
                figures.hold_latencies[-1],
                str(kind),
                response.headers.get("X-Request-ID", ""),
            )
        )
        if response.status_code == 201:
            figures.holders.add(customer.id)
            return
        if response.status_code == 409 and "seat-unavailable" in str(kind):
            free = await free_seats(http, base, flight_id, rng)
            continue
        return  # sold out, or anything else: this shopper is done


ARRIVALS_AT_ONCE = 48  # joins in flight at once: people arrive, not a DoS


async def one_customer(
    http, base, ws_base, room_id, flight_id, customer, figures, done, rng, arrivals
):
    import websockets

    try:
        async with arrivals:
            joined = await http.post(
                f"{base}/api/waiting-rooms/{room_id}/queue",
                headers={"Authorization": f"Token {customer.api_token}"},
            )
    except Exception as exc:
        figures.joins[type(exc).__name__] += 1
        return
    figures.joins[joined.status_code] += 1
    if joined.status_code != 200:
        return
    token = None
    for _reconnect in range(5):
        try:
            async with websockets.connect(
                f"{ws_base}/ws/waiting-room/{room_id}/",
                origin="http" + ws_base.removeprefix("ws"),  # a page of the site it dials
                additional_headers={"Cookie": f"sessionid={customer.session}"},
                open_timeout=600,  # handshakes queue up while 2,000 arrive at once
                ping_interval=None,
                max_queue=None,
            ) as ws:
                figures.connected += 1
                while not done.is_set():
                    try:
                        raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
                    except TimeoutError:
                        continue
                    message = json.loads(raw)
                    if message.get("status") == "WAITING":
                        now = time.perf_counter()
                        figures.position_updates += 1
                        figures.first_update = figures.first_update or now
                        figures.last_update = now
                        heard = figures.broadcasts.setdefault(message.get("version"), [now, now])
                        heard[1] = now
                        if message.get("unlikely"):
                            figures.told_unlikely.add(customer.id)
                    elif message.get("status") == "ADMITTED":
                        token = message["token"]
                        break
                break
        except Exception as exc:  # a refused or dropped socket: reconnect, like the page
            figures.ws_errors[type(exc).__name__] += 1
            await asyncio.sleep(1 + rng.random())
    if token and not done.is_set():
        figures.admitted += 1
        try:
            await shop(http, base, flight_id, customer, token, figures, rng)
        except Exception as exc:
            figures.crashed[type(exc).__name__] += 1


async def bot(http, base, flight_id, customer, figures) -> None:
    try:
        response = await http.post(
            f"{base}/api/bookings",
            json={"flightId": flight_id, "fareClass": "ECONOMY", "seats": ["1A"]},
            headers={"Authorization": f"Token {customer.api_token}"},
        )
    except Exception as exc:
        figures.bot_outcomes[type(exc).__name__] += 1
        return
    figures.bot_outcomes[response.status_code] += 1


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far."""
    import psutil

    times = psutil.cpu_times()
    return times.user + times.system + times.nice, sum(times)


def cpu_seconds(processes: dict[str, subprocess.Popen]) -> dict[str, float]:
    """CPU seconds (user + system) so far of each named process and its children."""
    import psutil

    totals = {}
    for name, proc in processes.items():
        total = 0.0
        try:
            root = psutil.Process(proc.pid)
            for p in [root, *root.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    total += t.user + t.system
                except psutil.NoSuchProcess:
                    pass
        except psutil.NoSuchProcess:
            pass
        totals[name] = total
    return totals


async def crowd(
    base,
    sale,
    flight,
    customers,
    *,
    bots: int,
    timeout: float,
    arrive: float,
    probe=None,
    ws_url: str | None = None,
):
    """Phase 1: everyone joins and connects (the pre-queue).  Phase 2: the sale opens two
    seconds after the crowd is in (or after `arrive` seconds), bots try to skip the queue,
    and the clock runs until every unit is held or `timeout`."""
    import httpx
    from django.utils import timezone

    from waitroom import room_selectors
    from waitroom.models import WaitingRoom

    ws_base = "ws" + (ws_url or base).removeprefix("http")
    figures = Figures()
    done = asyncio.Event()
    arrivals = asyncio.Semaphore(ARRIVALS_AT_ONCE)  # one per run: bound to this event loop
    limits = httpx.Limits(max_connections=400, max_keepalive_connections=400)
    timeouts = httpx.Timeout(120, pool=None)
    async with httpx.AsyncClient(timeout=timeouts, limits=limits) as http:
        rng = random.Random(13)
        tasks = [
            asyncio.create_task(
                one_customer(
                    http,
                    base,
                    ws_base,
                    sale.pk,
                    flight.pk,
                    c,
                    figures,
                    done,
                    random.Random(rng.random()),
                    arrivals,
                )
            )
            for c in customers
        ]
        arrival_deadline = time.perf_counter() + arrive
        # Everyone is in once each customer has either a socket open or a failed join (a
        # client read error under load): waiting for the failed ones would idle out `arrive`.
        while time.perf_counter() < arrival_deadline and figures.connected + sum(
            n for status, n in figures.joins.items() if status != 200
        ) < len(customers):
            await asyncio.sleep(1)
        print(
            f"  crowd in: {figures.connected} sockets open, joins {dict(figures.joins)}",
            flush=True,
        )
        opens_at = timezone.now() + timedelta(seconds=2)

        def set_opening():
            WaitingRoom.objects.filter(pk=sale.pk).update(opens_at=opens_at)
            sale.opens_at = opens_at

        await asyncio.to_thread(set_opening)
        await asyncio.sleep(2)
        opened = figures.opened = time.perf_counter()
        cpu_at_open = time.process_time()
        machine_at_open = machine_cpu()
        server_at_open = probe() if probe else {}
        lag_watch = asyncio.create_task(watch_loop(figures, done))
        bot_tasks = [
            asyncio.create_task(bot(http, base, flight.pk, c, figures)) for c in customers[:bots]
        ]
        sold_out_after = None
        deadline = opened + timeout
        while time.perf_counter() < deadline:
            left = await asyncio.to_thread(lambda: room_selectors.inventory_of(room=sale).left)
            if left == 0:
                sold_out_after = time.perf_counter() - opened
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(2)  # let the last shoppers finish
        figures.sale_wall = time.perf_counter() - opened
        figures.generator_cpu = (time.process_time() - cpu_at_open) / figures.sale_wall
        busy, total = (b - a for a, b in zip(machine_at_open, machine_cpu(), strict=True))
        figures.machine_busy = busy / total if total else 0.0
        figures.load_average = os.getloadavg()[0]
        server_cpu = {
            name: (seconds - server_at_open[name]) / figures.sale_wall
            for name, seconds in (probe() if probe else {}).items()
        }
        done.set()
        await lag_watch
        await asyncio.wait(tasks + bot_tasks, timeout=20)
        for t in tasks + bot_tasks:
            t.cancel()
        await asyncio.wait(tasks + bot_tasks, timeout=20)
    return figures, sold_out_after, server_cpu


# --- the proof -----------------------------------------------------------------------------


def verify(sale, flight, in_flight: timedelta = timedelta(0)) -> dict:
    """Every booking was made by an admitted customer inside their stay, and at every tick
    those shopping inside were within HORIZON_FACTOR x the units left."""
    import math

    from django.conf import settings

    from bookings.models import Booking
    from flights.models import FareInventory
    from flights.services import check_inventory
    from waitroom.models import Admission

    factor = settings.WAITING_ROOM["HORIZON_FACTOR"]
    admissions = list(
        Admission.objects.filter(room=sale).values_list("customer_id", "admitted_at", "expires_at")
    )
    by_customer = {}
    for customer_id, admitted_at, expires_at in admissions:
        by_customer.setdefault(customer_id, []).append((admitted_at, expires_at))
    bookings = list(
        Booking.objects.filter(sale=flight.sale).values_list(
            "customer_id", "created_at", "seat_count"
        )
    )
    outside = [b for b in bookings if not any(a <= b[1] <= e for a, e in by_customer.get(b[0], []))]
    capacity = sum(
        i.capacity + i.overbook_limit for i in FareInventory.objects.filter(sale=flight.sale_id)
    )

    def reading(tick, cutoff):
        # Right after the tick: units taken by bookings made before `cutoff`, and those
        # admitted so far without such a booking.
        booked_before = {c for c, created, _ in bookings if created < cutoff}
        left = capacity - sum(n for c, created, n in bookings if created < cutoff)
        shopping = sum(1 for c, a, e in admissions if a <= tick < e and c not in booked_before)
        bound = math.floor(factor * left)
        return shopping / bound if bound else float("inf") if shopping else 0.0

    worst = 0.0
    violations = strict_violations = 0
    for tick in sorted({a for _, a, _ in admissions}):
        # A booking's created_at is when its hold *started*; the tick saw it only if it had
        # committed.  A hold still in flight at the tick (started less than `in_flight`
        # before it) may be read either way: the tick is over the horizon only if it is so
        # under every such reading.
        cutoffs = [tick] + [
            created for _, created, _ in bookings if tick - in_flight <= created < tick
        ]
        ratios = [reading(tick, cutoff) for cutoff in cutoffs]
        worst = max(worst, min(ratios))
        violations += min(ratios) > 1
        strict_violations += ratios[0] > 1
    return {
        "admissions": len(admissions),
        "bookings": len(bookings),
        "units_booked": sum(n for _, _, n in bookings),
        "bookings_without_admission": len(outside),
        "ticks_over_horizon": violations,
        "ticks_over_horizon_strict": strict_violations,
        "worst_shopping_to_bound": worst,
        "inventory_drift": check_inventory(sale_id=flight.sale_id),
        "units": capacity,
    }


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


def report(result: dict, config: SaleSettings, label: str = "") -> None:
    figures, proof, sold_out_after = result["figures"], result["proof"], result["sold_out_after"]
    updates_span = (figures.last_update or 0) - (figures.first_update or 0)
    told = figures.told_unlikely
    print()
    print(
        f"waiting room{f' ({label})' if label else ''}: {config.customers} customers, "
        f"{proof['units']} units, rate {config.rate}/min, "
        f"max inside {config.max_inside}, horizon 1.5 x units left"
    )
    print(f"  joins                     {dict(figures.joins)}")
    print(f"  bots without a token      {dict(figures.bot_outcomes)}  (403 = refused)")
    if sold_out_after is None:
        print(f"  time to sell out          not within {config.timeout:.0f} s")
    else:
        print(f"  time to sell out          {sold_out_after:.1f} s after opening")
    lat = figures.hold_latencies
    print(f"  holds by admitted         {len(lat)} attempts  {dict(figures.hold_outcomes)}")
    print(
        f"  hold latency              p50 {percentile(lat, 0.5) * 1000:.0f} ms   "
        f"p99 {percentile(lat, 0.99) * 1000:.0f} ms"
    )
    rate = figures.position_updates / updates_span if updates_span > 0 else 0
    print(
        f"  websocket position updates {figures.position_updates} in {updates_span:.1f} s "
        f"= {rate:.0f}/s   (socket errors {dict(figures.ws_errors)})"
    )
    print(
        f"  admitted                  {proof['admissions']} (audit rows); "
        f"{len(told)} were told 'unlikely', of whom "
        f"{len(told & figures.holders)} got a hold"
    )
    print(
        f"  bookings                  {proof['bookings']} ({proof['units_booked']} units); "
        f"without an admission: {proof['bookings_without_admission']}"
    )
    print(
        f"  ticks over the horizon    {proof['ticks_over_horizon']} "
        f"(worst shopping / floor(1.5 x left) = {proof['worst_shopping_to_bound']:.2f}; "
        f"{proof['ticks_over_horizon_strict']} if every hold started before a tick had "
        f"committed before it)"
    )
    print(f"  inventory drift           {proof['inventory_drift'] or 'none'}")
    if figures.crashed:
        print(f"  shopper errors            {dict(figures.crashed)}")
    for line in slowest_holds(figures):
        print(line)
    lag = figures.loop_lag
    print(
        f"  load generator            CPU {figures.generator_cpu * 100:.0f}% of one core over "
        f"{figures.sale_wall:.1f} s; event-loop lag p50 {percentile(lag, 0.5) * 1000:.0f} ms "
        f"p99 {percentile(lag, 0.99) * 1000:.0f} ms"
    )
    print(
        f"  machine                   {os.cpu_count()} cores {figures.machine_busy * 100:.0f}% "
        f"busy over the sale (all processes, anyone's); load average {figures.load_average:.1f}"
    )
    for name, cpu in result.get("server_cpu", {}).items():
        print(f"  server CPU                {name}: {cpu * 100:.0f}% of one core")


def slowest_holds(figures: Figures, n: int = 5) -> list[str]:
    """The n slowest holds, each with the tick broadcasts the waiting pages were hearing
    while it ran (seconds after opening, first to last page told), to see what they waited on."""
    ticks = sorted(
        (first - figures.opened, last - figures.opened)
        for first, last in figures.broadcasts.values()
    )
    lines = []
    for started, seconds, outcome, request_id in sorted(figures.holds, key=lambda h: -h[1])[:n]:
        during = [
            f"{a:.1f}-{b:.1f}" for a, b in ticks if a <= started + seconds and b >= started - 0.5
        ]
        lines.append(
            f"  slow hold                 at {started:5.1f} s: {seconds * 1000:5.0f} ms {outcome}"
            f" [{request_id[:12]}] broadcasts heard {', '.join(during) or 'none'}"
        )
    return lines


def summary(result: dict) -> dict[str, str]:
    """The figures compared between runs, as printed in the side-by-side table."""
    figures, proof, sold_out_after = result["figures"], result["proof"], result["sold_out_after"]
    lat = figures.hold_latencies
    span = (figures.last_update or 0) - (figures.first_update or 0)
    refused = sum(n for kind, n in figures.hold_outcomes.items() if kind != 201)
    return {
        "time to sell out": "-" if sold_out_after is None else f"{sold_out_after:.1f} s",
        "hold attempts (refused)": f"{len(lat)} ({refused})",
        "hold p50": f"{percentile(lat, 0.5) * 1000:.0f} ms" if lat else "-",
        "hold p99": f"{percentile(lat, 0.99) * 1000:.0f} ms" if lat else "-",
        "ws position updates/s": f"{figures.position_updates / span:.0f}" if span > 0 else "0",
        "admitted": str(proof["admissions"]),
        "units booked": f"{proof['units_booked']} of {proof['units']}",
        "bookings without admission": str(proof["bookings_without_admission"]),
        "ticks over the horizon": str(proof["ticks_over_horizon"]),
        "inventory drift": "none" if not proof["inventory_drift"] else "YES",
        "load generator CPU": f"{figures.generator_cpu * 100:.0f}%",
        "machine busy (load avg)": (
            f"{figures.machine_busy * 100:.0f}% ({figures.load_average:.1f})"
        ),
        "generator loop lag p99": f"{percentile(figures.loop_lag, 0.99) * 1000:.0f} ms"
        if figures.loop_lag
        else "-",
    }


def side_by_side(results: dict[str, dict]) -> None:
    """One row per figure, one column per filter mode."""
    rows = {mode: summary(result) for mode, result in results.items()}
    names = list(next(iter(rows.values())))
    print()
    print("Redis hold filters, side by side (same sale, fresh stack, flight and crowd each):")
    header = "".join(f"{'filters ' + mode:>18}" for mode in rows)
    print(f"  {'':28}{header}")
    for name in names:
        print(f"  {name:28}" + "".join(f"{rows[mode][name]:>18}" for mode in rows))


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


def pooled_figures(pooled: dict[str, list[float]]) -> dict[str, dict[str, str]]:
    """Hold latency over every round of a side: one sale's p99 is its second-slowest hold
    or so, which one slow moment decides; the pooled p99 weighs every sale alike."""
    return {
        mode: {
            "holds": str(len(lat)),
            "hold p50": f"{percentile(lat, 0.5) * 1000:.0f} ms",
            "hold p99": f"{percentile(lat, 0.99) * 1000:.0f} ms",
            "slowest hold": f"{max(lat) * 1000:.0f} ms",
        }
        for mode, lat in pooled.items()
        if lat
    }


def print_pooled(pooled: dict[str, list[float]], rounds: int) -> None:
    figures = pooled_figures(pooled)
    print(f"\nadmitted shoppers' holds, pooled over {rounds} rounds:")
    for mode, row in figures.items():
        print(f"  filters {mode:<4}" + "".join(f"  {k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
