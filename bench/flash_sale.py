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
     e  seat map reads: cold (first read of a flight), warm (cached), 304 (If-None-Match)
     f  (only when asked: --scenarios f, e.g. a,f) best available (issue 29): 100 clients ask
        `POST /api/bookings/best-available` for the best 2 seats of category A of one fresh
        event (a seated venue, the single-seat rule on), twice each with --quick, four times
        otherwise; its holds/s beside (a)'s, and an audit on the rows: no seat in two
        bookings, every booking one block, no seat left alone that the rule forbids
        (bench/best_available_sale.py)
     o  (only when asked: --scenarios a,o) open loop: seatless holds arriving at a fixed rate
        (Poisson) at 50 % and 80 % of (a)'s measured requests/s, p50/p99/p99.9 for winners
        and for losers, pooled over --repeat runs of fresh sales (bench/open_loop.py)
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
import asyncio
import contextlib
import json
import os
import random
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_flash"
DEFAULT_REDIS_DB = 12
PG_SQL = Path(__file__).resolve().parent / "pgbench_hold.sql"
CARD = "4242424242424242"


# --- statistics --------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms"


# --- the load generator (a separate process) ---------------------------------------------------


async def _load(spec: dict[str, Any]) -> dict[str, Any]:
    import aiohttp

    base = spec["base_url"]
    kind = spec["kind"]
    deadline = time.monotonic() + spec["timeout"]
    records: list[tuple[float, float, int, bool]] = []  # start, latency, status, win
    budget = {"left": spec.get("requests", 0)}
    start_gate = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=60)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def call(method: str, path: str, **kw) -> tuple[int, Any, dict, float]:
            started = time.perf_counter()
            try:
                async with session.request(method, base + path, **kw) as resp:
                    body = await resp.read()
                    status = resp.status
                    headers = dict(resp.headers)
            except (TimeoutError, aiohttp.ClientError):
                return 599, None, {}, time.perf_counter() - started
            return status, body, headers, time.perf_counter() - started

        def auth(token: str) -> dict[str, str]:
            return {"Authorization": f"Token {token}"}

        def take() -> bool:
            if budget["left"] <= 0 or time.monotonic() > deadline:
                return False
            budget["left"] -= 1
            return True

        async def seatless(index: int, token: str) -> None:
            await call("GET", "/healthz")  # open the keep-alive connection before the gate
            await start_gate.wait()
            body = {
                "flightId": spec["flight_id"],
                "fareClass": "ECONOMY",
                "passengers": 1,
                "passengerNames": [f"Buyer {index}"],  # named, or the payment is refused
            }
            while take():
                t0 = time.perf_counter()
                status, _, _, lat = await call(
                    "POST", "/api/bookings", json=body, headers=auth(token)
                )
                records.append((t0, lat, status, status == 201))

        async def seats(index: int, token: str) -> None:
            await call("GET", "/healthz")
            rng = random.Random(index)
            candidates = list(spec["seats"])
            rng.shuffle(candidates)
            await start_gate.wait()
            while candidates and take():
                seat = candidates.pop()
                body = {
                    "flightId": spec["flight_id"],
                    "fareClass": "ECONOMY",
                    "seats": [seat],
                    "exitRowConfirmed": True,  # a seat may be in an exit row
                }
                t0 = time.perf_counter()
                status, _, _, lat = await call(
                    "POST", "/api/bookings", json=body, headers=auth(token)
                )
                records.append((t0, lat, status, status == 201))

        async def orders(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            body = {
                "flightId": spec["flight_id"],
                "fareClass": "ECONOMY",
                "passengers": 1,
                "passengerNames": [f"Buyer {index}"],  # named, or the payment is refused
            }
            while take():
                t0 = time.perf_counter()
                status, raw, _, lat = await call(
                    "POST", "/api/bookings", json=body, headers=auth(token)
                )
                if status != 201:
                    records.append((t0, lat, status, False))
                    continue
                booking_id = json.loads(raw)["bookingId"]
                status, raw, _, _ = await call(
                    "POST",
                    f"/api/bookings/{booking_id}/payments",
                    json={"paymentMethod": CARD},
                    headers={**auth(token), "Idempotency-Key": str(uuid.uuid4())},
                )
                won = status == 201 and json.loads(raw).get("bookingStatus") == "CONFIRMED"
                records.append((t0, time.perf_counter() - t0, status, won))

        async def best(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            body = {
                "eventId": spec["event_id"],
                "category": spec["category"],
                "quantity": spec["quantity"],
            }
            for _ in range(spec["asks"]):
                if not take():
                    return
                t0 = time.perf_counter()
                status, _, _, lat = await call(
                    "POST", "/api/bookings/best-available", json=body, headers=auth(token)
                )
                records.append((t0, lat, status, status == 201))

        async def one_seat(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            body = {
                "flightId": spec["flight_id"],
                "fareClass": "ECONOMY",
                "seats": [spec["seat"]],
                "exitRowConfirmed": True,  # the seat may be in an exit row
            }
            t0 = time.perf_counter()
            status, _, _, lat = await call("POST", "/api/bookings", json=body, headers=auth(token))
            records.append((t0, lat, status, status == 201))

        async def reads(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            queue: list[int] = spec["flight_queue"]
            headers = {"If-None-Match": spec["etag"]} if spec.get("etag") else {}
            while True:
                if spec.get("cold"):
                    if not queue or time.monotonic() > deadline:
                        return
                    flight_id = queue.pop()
                elif not take():
                    return
                else:
                    flight_id = queue[0]
                t0 = time.perf_counter()
                status, _, _, lat = await call(
                    "GET", f"/api/flights/{flight_id}/seats", headers=headers
                )
                records.append((t0, lat, status, status in (200, 304)))

        async def open_loop() -> None:
            """Arrivals on a Poisson schedule (bench/open_loop.py), each a seatless hold
            sent whether or not earlier ones were answered."""
            from bench.open_loop import poisson_schedule

            tokens, flights = spec["tokens"], spec["flight_ids"]
            schedule = poisson_schedule(
                rate=spec["rate"], seconds=spec["seconds"], seed=spec.get("seed", 7)
            )
            pending = []

            async def arrival(i: int) -> None:
                body = {
                    "flightId": flights[i % len(flights)],
                    "fareClass": "ECONOMY",
                    "passengers": 1,
                    "passengerNames": [f"Buyer {i}"],
                }
                t0 = time.perf_counter()
                status, _, _, lat = await call(
                    "POST", "/api/bookings", json=body, headers=auth(tokens[i % len(tokens)])
                )
                records.append((t0, lat, status, status == 201))

            await start_gate.wait()
            began = time.perf_counter()
            for i, at in enumerate(schedule):
                delay = began + at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending.append(asyncio.create_task(arrival(i)))
            await asyncio.gather(*pending)

        if kind == "open_loop":
            tasks = [asyncio.create_task(open_loop())]
            await asyncio.sleep(0.2)
            started = time.perf_counter()
            start_gate.set()
            await asyncio.gather(*tasks)
            elapsed = time.perf_counter() - started
            return {
                "elapsed": elapsed,
                "records": [(t0 - started, lat, st, win) for t0, lat, st, win in records],
            }
        client = {
            "seatless": seatless,
            "seats": seats,
            "orders": orders,
            "one_seat": one_seat,
            "reads": reads,
            "best": best,
        }[kind]
        tasks = [asyncio.create_task(client(i, token)) for i, token in enumerate(spec["tokens"])]
        await asyncio.sleep(0.5)
        window = cpu_seconds(spec.get("cpu_pids", {}))
        started = time.perf_counter()
        start_gate.set()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
        window_cpu = {
            name: seconds - window.get(name, 0.0)
            for name, seconds in cpu_seconds(spec.get("cpu_pids", {})).items()
        }
    return {
        "elapsed": elapsed,
        "records": [(t0 - started, lat, status, win) for t0, lat, status, win in records],
        "window_cpu": window_cpu,
    }


def cpu_seconds(groups: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds (user + system) used so far by each group's processes."""
    import psutil

    out = {}
    for name, pids in groups.items():
        out[name] = 0.0
        for pid in pids:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                times = psutil.Process(pid).cpu_times()
                out[name] += times.user + times.system
    return out


def load_main() -> None:
    sys.path.insert(0, str(ROOT))  # run as a script: `bench` (the open loop's schedule)
    spec = json.load(sys.stdin)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    json.dump(asyncio.run(_load(spec)), sys.stdout)


# --- the stack ---------------------------------------------------------------------------------


def free_port() -> int:
    with contextlib.closing(socket.socket()) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def compose_services(checkout: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """(command, environment) of the checkout's web, worker and beat services, and of its
    websocket tier `ws` where the checkout has one.  Of the environment only plain settings
    are kept: URLs, secrets and `${...}` values are ours."""
    import yaml

    services = yaml.safe_load((checkout / "docker-compose.yml").read_text())["services"]
    # Behind nginx the compose file has several web nodes (web1, web2): the bench runs one.
    if "web" not in services and "web1" in services:
        services["web"] = services["web1"]
    out = {}
    for name in ("web", "ws", "worker", "beat"):
        if name not in services:
            continue
        env = services[name].get("environment") or {}
        plain = {
            k: str(v)
            for k, v in env.items()
            if "${" not in str(v)
            and not k.endswith("_URL")
            and "SECRET" not in k
            # The bench's DATABASE_URL is PostgreSQL itself, not compose's PgBouncer.
            and k != "DB_PGBOUNCER"
        }
        out[name] = (list(services[name]["command"]), plain)
    return out


def localise(
    command: list[str], *, checkout: Path, port: int, workers: int | None, ws_port: int = 0
) -> list[str]:
    """The compose command, run from the checkout's venv on 127.0.0.1:<port> (the websocket
    tier's 8001 on <ws_port>)."""
    out = []
    for token in command:
        token = token.replace("0.0.0.0:8000", f"127.0.0.1:{port}")
        token = {"0.0.0.0": "127.0.0.1", "8000": str(port), "8001": str(ws_port)}.get(token, token)
        out.append(token)
    if workers is not None:
        for flag in ("--workers", "--web-workers"):
            if flag in out:
                out[out.index(flag) + 1] = str(workers)
    binary = checkout / ".venv" / "bin" / out[0]
    if binary.exists():
        out[0] = str(binary)
    return out


class Stack:
    def __init__(
        self,
        *,
        checkout: Path,
        env: dict[str, str],
        port: int,
        workers: int | None,
        web_command: str | None = None,
        web_threads: int | None = None,
    ):
        self.checkout, self.env, self.port, self.workers = checkout, env, port, workers
        self.web_threads = web_threads
        self.base_env = dict(env)
        self.web_command = web_command
        self.logdir = Path(tempfile.mkdtemp(prefix="flash-sale-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.ws_port = free_port()

    def start(self) -> None:
        for name, (command, compose_env) in compose_services(self.checkout).items():
            if name == "ws" and self.web_command:
                continue  # another web server under test serves its own websockets
            cmd = localise(
                command,
                checkout=self.checkout,
                port=self.port,
                workers=self.workers if name == "web" else None,
                ws_port=self.ws_port,
            )
            if name == "web" and self.web_threads:
                compose_env = {**compose_env, "WEB_THREADS": str(self.web_threads)}
                if "--blocking-threads" in cmd:  # granian's HTTP threads
                    cmd[cmd.index("--blocking-threads") + 1] = str(self.web_threads)
            if name == "web" and self.web_command:
                cmd = localise(
                    shlex.split(self.web_command), checkout=self.checkout, port=self.port,
                    workers=None,
                )  # fmt: skip
            log = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
            print(f"  start {name}: {shlex.join(cmd)}  {compose_env or ''}", flush=True)
            self.procs[name] = subprocess.Popen(
                cmd,
                cwd=self.checkout,
                env={**self.env, **compose_env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        import urllib.request

        for _ in range(240):
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise SystemExit(f"{name} died; see {self.logdir / (name + '.log')}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise SystemExit(f"web did not answer; see {self.logdir}")
        time.sleep(2)  # let every web worker finish importing

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str | None:
        """Where the pages' websockets go: the websocket tier, as the proxy in front routes
        `/ws/` (docker-compose.yml), or the web server itself."""
        return f"http://127.0.0.1:{self.ws_port}" if "ws" in self.procs else None

    def restart(self, extra_env: dict[str, str], *, between=None) -> None:
        """Stop everything, run `between` (e.g. flush Redis), start again with the original
        environment plus `extra_env`."""
        self.stop()
        if between:
            between()
        self.env = {**self.base_env, **extra_env}
        self.procs = {}
        self.start()

    def stop(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)

    def groups(self) -> dict[str, list[int]]:
        import psutil

        out = {}
        for name, proc in self.procs.items():
            with contextlib.suppress(psutil.NoSuchProcess):
                root = psutil.Process(proc.pid)
                out[name] = [root.pid] + [c.pid for c in root.children(recursive=True)]
        return out

    def web_rss(self) -> list[float]:
        """RSS in MB of each process that serves HTTP (the children, or the one process)."""
        import psutil

        root = psutil.Process(self.procs["web"].pid)
        children = [
            c
            for c in root.children(recursive=True)
            if "resource_tracker" not in " ".join(c.cmdline())
        ]
        return [p.memory_info().rss / 2**20 for p in (children or [root])]


def postgres_pids() -> list[int]:
    import psutil

    return [p.pid for p in psutil.process_iter(["name"]) if p.info["name"] == "postgres"]


class CpuMeter:
    """CPU seconds per process group between two snapshots (processes alive at the end)."""

    def __init__(self, groups: dict[str, list[int]]):
        self.before = {name: self._times(pids) for name, pids in groups.items()}
        self.started = time.monotonic()

    @staticmethod
    def _times(pids: list[int]) -> dict[int, float]:
        import psutil

        out = {}
        for pid in pids:
            with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                t = psutil.Process(pid).cpu_times()
                out[pid] = t.user + t.system
        return out

    def stop(self, groups: dict[str, list[int]]) -> dict[str, float]:
        wall = time.monotonic() - self.started
        result = {}
        for name, pids in groups.items():
            now = self._times(pids)
            before = self.before.get(name, {})
            used = sum(t - before.get(pid, 0.0) for pid, t in now.items())
            result[name] = used / wall * 100  # percent of one core
        return result


# --- fixtures and the audit (this checkout's models, on the scratch database) ------------------


def django_setup(database_url: str, redis_url: str, checkout: Path = ROOT) -> None:
    """Django on the scratch database with the *checkout's* models: fixtures and the audit
    must speak the schema the stack migrated (a "before" checkout may predate the engine's
    `Sale`; see `_sale_filter`)."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["REDIS_URL"] = redis_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    if checkout != ROOT:
        sys.path.insert(0, str(checkout))
    import django

    # Celery (imported by the settings package) puts the working directory first on sys.path.
    with contextlib.chdir(checkout):
        django.setup()


def _sale_filter(model, flight) -> dict[str, int]:
    """Filter kwargs for `model`'s rows of one flight: by sale since the engine's `Sale`
    (issue 14), by flight in checkouts before it."""
    field_names = {f.name for f in model._meta.get_fields()}
    if "sale" in field_names:
        return {"sale_id": getattr(flight, "sale_id", getattr(flight, "pk", flight))}
    return {"flight_id": getattr(flight, "pk", flight)}


_counter = {"flight": 0, "users": 0}


def new_flight(code_prefix: str = "FS"):
    from datetime import timedelta

    from django.utils import timezone

    from flights.models import Airport
    from flights.services import create_flight

    fra, _ = Airport.objects.get_or_create(
        code="FRA",
        defaults={
            "name": "Frankfurt",
            "city": "Frankfurt",
            "country": "DE",
            "time_zone": "Europe/Berlin",
        },
    )
    ber, _ = Airport.objects.get_or_create(
        code="BER",
        defaults={
            "name": "Berlin",
            "city": "Berlin",
            "country": "DE",
            "time_zone": "Europe/Berlin",
        },
    )
    _counter["flight"] += 1
    departs = timezone.now() + timedelta(days=30, minutes=_counter["flight"])
    return create_flight(
        code=f"{code_prefix}{_counter['flight']}",
        origin=fra,
        destination=ber,
        departure_at=departs,
        arrival_at=departs + timedelta(hours=1, minutes=10),
    )


def new_customers(count: int) -> list[tuple[int, str]]:
    """`count` fresh customers, each with an API token: [(user id, token)]."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    User = get_user_model()
    start = _counter["users"]
    _counter["users"] += count
    run = uuid.uuid4().hex[:6]
    users = User.objects.bulk_create(
        User(username=f"flash-{run}-{start + i}", password="!") for i in range(count)
    )
    tokens = Token.objects.bulk_create(Token(user=u, key=Token.generate_key()) for u in users)
    return [(t.user_id, t.key) for t in tokens]


def audit(flight_id: int) -> tuple[bool, str]:
    from django.db.models import Sum

    from bookings.models import Booking, BookingStatus
    from flights.models import FareInventory
    from flights.services import check_inventory

    by_sale = "sale" in {f.name for f in FareInventory._meta.get_fields()}
    problems = check_inventory(**{"sale_id" if by_sale else "flight_id": flight_id})
    lines = []
    for inv in FareInventory.objects.filter(**_sale_filter(FareInventory, flight_id)).order_by(
        "fare_class"
    ):
        live = (
            Booking.objects.filter(
                **_sale_filter(Booking, flight_id),
                fare_class=inv.fare_class,
                status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED],
            ).aggregate(n=Sum("seat_count"))["n"]
            or 0
        )
        limit = inv.capacity + inv.overbook_limit
        if live > limit:
            problems.append(f"{inv.fare_class}: {live} live units > {limit}")
        lines.append(f"{inv.fare_class} live {live}/{limit}")
    ok = not problems
    return ok, ("OK " if ok else "OVERSOLD/DRIFT ") + ", ".join(lines + problems)


# --- scenarios ---------------------------------------------------------------------------------


# The stack's processes while `measured` runs: the load generator reads their CPU time at the
# start gate and after the last answer (the window), so neither the clients' warm-up requests
# (a /healthz each, opening its connection) nor the seconds around the load are counted.
_window_groups: dict[str, list[int]] = {}


def run_load(spec: dict[str, Any]) -> dict[str, Any]:
    spec = {**spec, "cpu_pids": _window_groups}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--load-spec"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=spec["timeout"] + 120,
    )
    if proc.returncode != 0:
        raise SystemExit(f"load generator failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def summarise(name: str, result: dict[str, Any], *, win_label: str = "wins") -> dict[str, Any]:
    records = result["records"]
    elapsed = result["elapsed"]
    wins = [r for r in records if r[3]]
    statuses: dict[str, int] = {}
    for r in records:
        statuses[str(r[2])] = statuses.get(str(r[2]), 0) + 1
    last_win = max((r[0] + r[1] for r in wins), default=0.0)
    summary = {
        "scenario": name,
        "requests": len(records),
        "wins": len(wins),
        "elapsed_s": elapsed,
        "wins_per_s": len(wins) / last_win if last_win else 0.0,
        "req_per_s": len(records) / elapsed if elapsed else 0.0,
        "win_p50": pct([r[1] for r in wins], 0.5),
        "win_p99": pct([r[1] for r in wins], 0.99),
        "all_p50": pct([r[1] for r in records], 0.5),
        "all_p99": pct([r[1] for r in records], 0.99),
        "statuses": statuses,
        "window_cpu": result.get("window_cpu", {}),
    }
    print(
        f"  {win_label} {summary['wins']}/{summary['requests']} in {elapsed:.1f}s: "
        f"{summary['wins_per_s']:.1f} {win_label}/s (to the last win), "
        f"{summary['req_per_s']:.1f} req/s | {win_label} p50 {ms(summary['win_p50'])} "
        f"p99 {ms(summary['win_p99'])} | all p50 {ms(summary['all_p50'])} "
        f"p99 {ms(summary['all_p99'])} | statuses {statuses}",
        flush=True,
    )
    return summary


def measured(stack: Stack | None, fn):
    """Run fn() and add the CPU each process group used: % of one core, and CPU ms per
    request.  On a shared machine the second is the steadier figure: it does not depend on
    how much of the CPU the other tenants left us."""
    groups = (stack.groups() if stack else {}) | {"postgres(all)": postgres_pids()}
    meter = CpuMeter(groups)
    children_before = os.times()
    _window_groups.clear()
    _window_groups.update({k: v for k, v in groups.items() if k != "postgres(all)"})
    try:
        out = fn()
    finally:
        _window_groups.clear()
    children_after = os.times()
    groups = (stack.groups() if stack else {}) | {"postgres(all)": postgres_pids()}
    span = time.monotonic() - meter.started
    cpu = meter.stop(groups)
    loadgen = (children_after.children_user - children_before.children_user) + (
        children_after.children_system - children_before.children_system
    )
    cpu["loadgen"] = loadgen / span * 100
    requests = max(1, out.get("requests", 1))
    out["cpu"] = cpu
    # Percent figures are over the meter's span (a bit longer than the load itself).
    out["cpu_ms_per_request"] = {k: v / 100 * span * 1000 / requests for k, v in cpu.items()}
    print(
        "  cpu % of one core: "
        + ", ".join(f"{k} {v:.0f}%" for k, v in cpu.items())
        + " | cpu ms per request: "
        + ", ".join(f"{k} {v:.1f}" for k, v in out["cpu_ms_per_request"].items())
    )
    if out.get("window_cpu"):
        out["window_cpu_ms_per_request"] = {
            k: v * 1000 / requests for k, v in out["window_cpu"].items()
        }
        print(
            "  cpu ms per request from the start gate to the last answer: "
            + ", ".join(f"{k} {v:.2f}" for k, v in out["window_cpu_ms_per_request"].items())
        )
    return out


def scenario_holds(kind: str, args, stack, base_url: str) -> dict[str, Any]:
    from flights.models import Seat

    flight = new_flight()
    customers = new_customers(args.clients)
    spec = {
        "base_url": base_url,
        "kind": kind,
        "flight_id": flight.pk,
        "tokens": [t for _, t in customers],
        "requests": args.requests,
        "timeout": args.timeout,
    }
    if kind == "seats":
        spec["seats"] = list(
            Seat.objects.filter(**_sale_filter(Seat, flight), fare_class="ECONOMY").values_list(
                "seat_no", flat=True
            )
        )
    label = {"seatless": "holds", "seats": "holds", "orders": "orders"}[kind]
    out = measured(stack, lambda: summarise(kind, run_load(spec), win_label=label))
    out["audit_ok"], text = audit(flight.pk)
    print(f"  audit: {text}", flush=True)
    return out


def scenario_one_seat(args, stack, base_url: str) -> dict[str, Any]:
    flight = new_flight()
    customers = new_customers(args.one_seat_clients)
    spec = {
        "base_url": base_url,
        "kind": "one_seat",
        "flight_id": flight.pk,
        "seat": "14C",
        "tokens": [t for _, t in customers],
        "timeout": args.timeout,
    }
    out = measured(stack, lambda: summarise("one-seat", run_load(spec)))
    out["audit_ok"], text = audit(flight.pk)
    if out["wins"] != 1:
        out["audit_ok"] = False
        text += f" -- expected exactly 1 winner, got {out['wins']}"
    print(f"  audit: {text}", flush=True)
    return out


def scenario_best_available(args, stack, base_url: str) -> dict[str, Any]:
    """(f): bench/best_available_sale.py's event and audit, this module's load."""
    from bench import best_available_sale as sale

    asks = 2 if args.quick else 4  # 9 units per customer and sale is the default hold cap
    event, rows = sale.new_event(blocks_asked=args.clients * asks)
    print(
        f"  event {event.pk}: {rows} rows x {sale.SEATS_PER_ROW} seats of category "
        f"{sale.CATEGORY} (aisles after {sale.AISLES}), {args.clients} clients x {asks} asks "
        f"for {sale.QUANTITY}",
        flush=True,
    )
    customers = new_customers(args.clients)
    spec = sale.load_spec(
        base_url=base_url,
        event_id=event.pk,
        tokens=[t for _, t in customers],
        asks=asks,
        timeout=args.timeout,
    )
    out = measured(stack, lambda: summarise("best", run_load(spec), win_label="holds"))
    inventory_ok, text = audit(event.sale_id)
    print(f"  audit (inventory): {text}", flush=True)
    rows_ok, text = sale.audit_rows(event.sale_id)
    print(f"  audit (rows): {text}", flush=True)
    out["audit_ok"] = inventory_ok and rows_ok
    return out


def scenario_reads(args, stack, base_url: str) -> dict[str, Any]:
    import urllib.request

    cold_flights = [new_flight("CM").pk for _ in range(args.cold_flights)]
    hot = new_flight("HM").pk
    with urllib.request.urlopen(f"{base_url}/api/flights/{hot}/seats") as resp:
        etag = resp.headers.get("ETag")
    common = {"base_url": base_url, "kind": "reads", "timeout": args.timeout}
    results = {}
    clients = ["-"] * 8  # the same concurrency for all three
    print(f"  cold: {len(cold_flights)} first reads of distinct flights, 8 clients", flush=True)
    results["cold"] = measured(
        stack,
        lambda: summarise(
            "reads-cold",
            run_load({**common, "cold": True, "flight_queue": cold_flights, "tokens": clients}),
            win_label="ok",
        ),
    )
    print(f"  warm: {args.read_requests} reads of one cached flight, 8 clients", flush=True)
    spec = {**common, "flight_queue": [hot], "tokens": clients, "requests": args.read_requests}
    results["warm"] = measured(
        stack, lambda: summarise("reads-warm", run_load(spec), win_label="ok")
    )
    if etag:
        print(f"  304: the same with If-None-Match: {etag}", flush=True)
        results["not_modified"] = measured(
            stack,
            lambda: summarise("reads-304", run_load({**spec, "etag": etag}), win_label="ok"),
        )
    else:
        print("  304: the server sent no ETag; skipped", flush=True)
    cold, warm = results["cold"]["all_p50"], results["warm"]["all_p50"]
    if cold and warm:
        print(f"  cold p50 / warm p50 = {cold / warm:.1f}x", flush=True)
    return results


def scenario_waiting_room(args, stack, base_url: str) -> dict[str, Any]:
    """(w): bench/waiting_room.py's sale on this stack, with the Redis hold filters on and
    then off (a restart each, Redis flushed in between so no gate, counter or beat lock of the
    other side is left), printed side by side.  Against --base-url only the filters that
    stack runs with are measured."""
    import logging

    import redis

    from bench import waiting_room

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    sale = waiting_room.SaleSettings(
        customers=args.wr_customers,
        rows=args.wr_rows,
        bots=args.wr_bots,
        timeout=args.wr_timeout,
        arrive=args.wr_arrive,
    )
    if stack is None:
        result = waiting_room.run_sale(base_url, sale)
        waiting_room.report(result, sale, label="filters as the running stack has them")
        return {"as configured": waiting_room.summary(result)}
    results = {}
    try:
        for mode, switches in waiting_room.FILTER_MODES.items():
            print(f"  filters {mode}: restarting the stack with {switches}", flush=True)
            stack.restart(
                {**waiting_room.SERVER_ENV, **switches},
                between=lambda: redis.Redis.from_url(args.redis_url).flushdb(),
            )
            results[mode] = waiting_room.run_sale(base_url, sale, ws_url=stack.ws_url)
            waiting_room.report(results[mode], sale, label=f"filters {mode}")
        waiting_room.side_by_side(results)
    finally:
        # The scenarios after this one run on the stack as it was started.
        stack.restart({}, between=lambda: redis.Redis.from_url(args.redis_url).flushdb())
    return {mode: waiting_room.summary(result) for mode, result in results.items()}


# --- PostgreSQL's own ceiling ------------------------------------------------------------------


def run_pgbench(args) -> dict[str, float | None]:
    print("\nPostgreSQL's own ceiling: the article's hold on one hot row (pgbench)", flush=True)
    seconds = 5 if args.quick else 10
    return {str(c): pgbench(args.database_url, c, seconds) for c in sorted({32, args.clients})}


def pgbench(database_url: str, clients: int, seconds: int) -> float | None:
    from urllib.parse import urlparse

    from django.contrib.auth import get_user_model
    from django.db import connection

    from bookings.models import Booking
    from flights.models import FareInventory, Seat

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('max_connections')::int - count(*) FROM pg_stat_activity"
        )
        free = cursor.fetchone()[0] - 5  # leave room for superuser slots and the stack
    if clients > free:
        print(f"  pgbench: {clients} clients would exceed max_connections; {free} instead")
        clients = free
    flight = new_flight("PG")
    inv = FareInventory.objects.get(**_sale_filter(FareInventory, flight), fare_class="ECONOMY")
    FareInventory.objects.filter(pk=inv.pk).update(capacity=10_000_000)
    ids = sorted(
        Seat.objects.filter(**_sale_filter(Seat, flight), fare_class="ECONOMY").values_list(
            "id", flat=True
        )
    )
    assert ids[-1] - ids[0] + 1 == len(ids), "economy seat ids are not contiguous"
    customer = get_user_model().objects.create(username=f"pgbench-{uuid.uuid4().hex[:8]}")
    sql_file = PG_SQL
    sql = PG_SQL.read_text()
    if "booking_class" not in {f.name for f in Booking._meta.get_fields()}:
        # A checkout before the nested booking classes: no such column to fill.
        sql = sql.replace(" seat_count, booking_class,", " seat_count,").replace(" 1, '',", " 1,")
    if FareInventory._meta.db_table != "bookings_inventory":
        # A checkout before the engine's tables (issue 14): the same SQL on its names.
        for new, old in (
            ("bookings_inventory", FareInventory._meta.db_table),
            ("bookings_seat", Seat._meta.db_table),
            ("(customer_id, sale_id,", "(customer_id, flight_id,"),
        ):
            sql = sql.replace(new, old)
    if sql != PG_SQL.read_text():
        sql_file = Path(tempfile.mkdtemp(prefix="pgbench-")) / PG_SQL.name
        sql_file.write_text(sql)
    url = urlparse(database_url)
    cmd = [
        "pgbench", "-n", "-h", url.hostname or "127.0.0.1", "-p", str(url.port or 5432),
        "-U", url.username or "postgres", "-c", str(clients), "-j", "2", "-T", str(seconds),
        "-f", str(sql_file), "-D", f"inv_id={inv.pk}", "-D", f"flight_id={flight.pk}",
        "-D", f"customer_id={customer.pk}", "-D", f"seat_lo={ids[0]}", "-D", f"seat_hi={ids[-1]}",
        url.path.lstrip("/"),
    ]  # fmt: skip
    print(f"  {shlex.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    match = re.search(r"tps = ([0-9.]+) \(without initial", proc.stdout)
    if not match:
        print(f"  pgbench failed: {proc.stderr[-500:]}")
        return None
    tps = float(match.group(1))
    lat = re.search(r"latency average = ([0-9.]+) ms", proc.stdout)
    print(
        f"  pgbench {clients} clients: {tps:.0f} tps, latency avg {lat.group(1) if lat else '?'} ms"
    )
    return tps


# --- main --------------------------------------------------------------------------------------


def recreate_database(database_url: str) -> None:
    import psycopg

    name = database_url.rsplit("/", 1)[1]
    assert name.startswith("seatkeeper_bench"), "refusing to recreate a non-scratch database"
    with psycopg.connect(database_url, dbname="postgres", autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name]
        )
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


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
        "--repeat", type=int, default=1, help="(o) runs per rate, latencies pooled over them"
    )
    parser.add_argument("--save", type=Path, help="write the figures as JSON here")
    parser.add_argument("--baseline", type=Path, help="a --save file to print ratios against")
    parser.add_argument("--load-spec", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_spec:
        return load_main()
    # This bench's own modules, before django_setup puts a --checkout (which may not have
    # them: an older commit) first on sys.path.
    sys.path.insert(0, str(ROOT))
    from bench.open_loop import scenario_open_loop

    args.clients = 100
    args.requests = args.hold_requests or (300 if args.quick else 1000)
    args.one_seat_clients = 200
    args.timeout = 60 if args.quick else 180
    args.read_requests = 1000 if args.quick else 3000
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
