"""Lose one web node of two, by SIGKILL, in the middle of a sale (issue 27 item 4).

    flock /work/wt/bench.lock .venv/bin/python bench/node_loss.py [--clients 100] [--units 180]
        [--kill-after 0.33] [--save bench/results/node_loss.json]

The production shape, local: a throw-away PostgreSQL and Redis, two web nodes (uvicorn, one
process each, as docker-compose.yml's web1/web2), a Celery worker, and Debian's nginx with the
committed deploy/nginx/seatkeeper.conf in front (only the addresses made local).  `--clients`
customers each buy one seatless unit after another (hold, then pay) through nginx until the
flight is sold out.  When `--kill-after` of the units are sold, web1's process group gets SIGKILL.

Clients behave as docs/reliability.md ("Clients: how to retry") tells them: every hold and
every payment carries an Idempotency-Key, and on a connection error, a 502/503 or a 409
`idempotency-key-in-flight` they send the same request again with the same key.

What must hold, and is printed (exit status 1 if any fails):
- every booking a client was told of (201 or a replay) exists; every payment a client was told
  CONFIRMED is a CONFIRMED booking (no lost paid booking);
- no live booking exists that no client was told of (no ghost hold);
- no 5xx other than 502/503 (and connection errors) during the kill;
- the flight's counters agree with its bookings and nothing is oversold (`check_inventory`);
- throughput recovers on the other node: the orders completed per second after the kill.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.flash_sale import CARD, audit, django_setup, new_customers, new_flight
from bench.stack import (
    ROOT,
    ThrowawayPostgres,
    ThrowawayRedis,
    app_env,
    free_port,
    manage,
    start_beat,
    start_web,
    start_worker,
    stop,
    wait_for_port,
)

RETRYABLE = {502, 503, 599}  # 599: the connection failed or was cut (the client's own code)


def site_config(web: list[int], ws: int, port: int) -> str:
    """The committed site config with only the addresses made local (as tests/project/
    test_proxy.py does)."""
    text = (ROOT / "deploy" / "nginx" / "seatkeeper.conf").read_text()
    for old, new in {
        "server web1:8000 ": f"server 127.0.0.1:{web[0]} ",
        "server web2:8000 ": f"server 127.0.0.1:{web[1]} ",
        "server ws:8001;": f"server 127.0.0.1:{ws};",
        "listen 80;": f"listen 127.0.0.1:{port};",
    }.items():
        if text.count(old) != 1:
            raise SystemExit(f"deploy/nginx/seatkeeper.conf changed: {old!r} not found once")
        text = text.replace(old, new)
    return text


def start_nginx(tmp: Path, web: list[int], ws: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    (tmp / "seatkeeper.conf").write_text(site_config(web, ws, port))
    temp = "\n".join(
        f"    {kind}_temp_path {tmp / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (tmp / "nginx.conf").write_text(
        f"pid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'} warn;\nworker_processes 1;\n"
        f"events {{ worker_connections 1024; }}\nhttp {{\n{temp}\n"
        f"    log_format upstreams '$status $upstream_addr $upstream_status';\n"
        f"    access_log {tmp / 'access.log'} upstreams;\n"
        f"    include {tmp / 'seatkeeper.conf'};\n}}\n"
    )
    as_user: list[str] = []
    if os.geteuid() == 0:  # nginx's workers would drop to nobody, who cannot read a root tmp
        shutil.chown(tmp, "postgres", "postgres")
        for path in tmp.iterdir():
            shutil.chown(path, "postgres", "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    nginx = subprocess.Popen(
        [*as_user, shutil.which("nginx") or "/usr/sbin/nginx", "-g", "daemon off;",
         "-p", str(tmp), "-c", str(tmp / "nginx.conf"), "-e", str(tmp / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    wait_for_port(port, timeout=20)
    return nginx, port


async def sale(
    base: str, flight_id: int, tokens: list[str], *, kill_after_orders: int, kill, timeout: float
) -> dict[str, Any]:
    import aiohttp

    statuses: Counter[int] = Counter()
    told_held: set[int] = set()
    told_paid: set[int] = set()
    completed: list[float] = []  # seconds since the start, per confirmed order
    payment_waits: list[float] = []  # first payment attempt to its answer, retries included
    retries = Counter()
    unanswered = Counter()  # requests still retried when the bench's timeout came
    last_answers: list[str] = []  # what each of those last heard
    sold_out = asyncio.Event()
    started = time.perf_counter()
    deadline = started + timeout

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=30)
    ) as session:

        async def send(method: str, path: str, token: str, key: str, body: dict, what: str):
            """The same request, with the same key, until it gets an answer that is not a
            retry signal (the documented client behaviour)."""
            headers = {"Authorization": f"Token {token}", "Idempotency-Key": key}
            while time.perf_counter() < deadline:
                try:
                    async with session.request(
                        method, base + path, json=body, headers=headers
                    ) as resp:
                        status, raw = resp.status, await resp.read()
                except (TimeoutError, aiohttp.ClientError):
                    status, raw = 599, b""
                statuses[status] += 1
                if b"gateway-unavailable" in raw:
                    # The attempt is over (a crash left it unsent and reconciliation failed
                    # it): the answer says to try again with a new key.
                    retries[f"{what} (new key)"] += 1
                    headers["Idempotency-Key"] = str(uuid.uuid4())
                    continue
                # The first attempt still runs, or died with the node: a payment it left
                # PROCESSING is settled by beat's reconciliation, and the key then replays it.
                in_flight = status == 409 and (
                    b"idempotency-key-in-flight" in raw or b"payment-in-progress" in raw
                )
                if status in RETRYABLE or in_flight:
                    retries[what] += 1
                    await asyncio.sleep(1.0 if b"payment-in-progress" in raw else 0.05)
                    continue
                return status, (json.loads(raw) if raw else {})
            unanswered[what] += 1
            last_answers.append(f"{what} {status}: {raw[:400].decode(errors='replace')}")
            return None, {}

        async def customer(index: int, token: str) -> None:
            body = {
                "flightId": flight_id,
                "fareClass": "ECONOMY",
                "passengers": 1,
                "passengerNames": [f"Buyer {index}"],
            }
            while not sold_out.is_set() and time.perf_counter() < deadline:
                status, answer = await send(
                    "POST", "/api/bookings", token, str(uuid.uuid4()), body, "hold"
                )
                if status is None:
                    return
                if status == 409:
                    sold_out.set()
                    return
                if status == 429:
                    await asyncio.sleep(0.2)
                    continue
                if status != 201:
                    raise SystemExit(f"hold answered {status}: {answer}")
                booking_id = answer["bookingId"]
                told_held.add(booking_id)
                paying_since = time.perf_counter()
                status, answer = await send(
                    "POST",
                    f"/api/bookings/{booking_id}/payments",
                    token,
                    str(uuid.uuid4()),
                    {"paymentMethod": CARD},
                    "pay",
                )
                if status is None:
                    return
                if status == 201 and answer.get("bookingStatus") == "CONFIRMED":
                    told_paid.add(booking_id)
                    completed.append(time.perf_counter() - started)
                    payment_waits.append(time.perf_counter() - paying_since)
                else:
                    raise SystemExit(f"payment answered {status}: {answer}")

        async def killer() -> float:
            # Mid-sale by progress, not by the clock: a loaded machine's first orders are slow.
            while len(completed) < kill_after_orders and not sold_out.is_set():
                await asyncio.sleep(0.01)
            kill()
            return time.perf_counter() - started

        kill_task = asyncio.create_task(killer())
        await asyncio.gather(*(customer(i, t) for i, t in enumerate(tokens)))
        killed_at = await kill_task
        elapsed = time.perf_counter() - started
    return {
        "statuses": dict(statuses),
        "retries": dict(retries),
        "unanswered": dict(unanswered),
        "last_answers": last_answers,
        "told_held": sorted(told_held),
        "told_paid": sorted(told_paid),
        "completed": completed,
        "slowest_payment_s": round(max(payment_waits, default=0), 2),
        "killed_at": killed_at,
        "elapsed": elapsed,
    }


def rate(times: list[float], start: float, end: float) -> float:
    return sum(start <= t < end for t in times) / max(end - start, 1e-9)


def payment_states(flight_id: int) -> dict[str, Any]:
    from payments.models import Payment

    payments = Payment.objects.filter(booking__sale_id=flight_id)
    states = Counter(f"{p.status} {p.failure_reason or ''}".strip() for p in payments)
    return dict(states)


def verdict(result: dict[str, Any], flight_id: int) -> tuple[list[str], dict[str, Any]]:
    from bookings.models import Booking, BookingStatus

    rows = dict(Booking.objects.filter(sale_id=flight_id).values_list("pk", "status"))
    live_states = (BookingStatus.HELD, BookingStatus.CONFIRMED)
    live = {pk for pk, status in rows.items() if status in live_states}
    told_held, told_paid = set(result["told_held"]), set(result["told_paid"])
    problems = []
    if missing := told_held - rows.keys():
        problems.append(f"told of bookings that do not exist: {sorted(missing)[:10]}")
    if lost := {pk for pk in told_paid if rows.get(pk) != BookingStatus.CONFIRMED}:
        problems.append(f"paid bookings not CONFIRMED: {sorted(lost)[:10]}")
    if ghosts := live - told_held:
        problems.append(f"ghost holds (no client was told): {sorted(ghosts)[:10]}")
    statuses = result["statuses"].items()
    if bad := {s: n for s, n in statuses if int(s) >= 500 and int(s) not in RETRYABLE}:
        problems.append(f"5xx other than 502/503: {bad}")
    if result["unanswered"]:
        problems.append(f"no answer before the timeout: {result['unanswered']}")
    ok, inventory = audit(flight_id)
    if not ok:
        problems.append(inventory)
    killed, done = result["killed_at"], result["completed"]
    last = max(done) if done else killed
    figures = {
        "orders": len(told_paid),
        "bookings_in_db": len(rows),
        "live_in_db": len(live),
        "orders_per_s_before_kill": round(rate(done, 0, killed), 1),
        "orders_per_s_first_2s_after": round(rate(done, killed, killed + 2), 1),
        "orders_per_s_after_2s_to_end": (
            round(rate(done, killed + 2, last), 1) if last > killed + 2 else None
        ),
        "gap_s": round(min((t for t in done if t >= killed), default=killed) - killed, 2),
        "inventory": inventory,
        "payments": payment_states(flight_id),
    }  # fmt: skip
    return problems, figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--units", type=int, default=180, help="the cabin's capacity")
    parser.add_argument(
        "--kill-after", type=float, default=0.33, help="the share of units sold when web1 dies"
    )
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="node-loss-"))
    procs: dict[str, subprocess.Popen] = {}
    with ThrowawayPostgres() as pg, ThrowawayRedis() as redis:
        env = app_env(
            pg.url,
            redis.url,
            DJANGO_DEBUG="false",
            DJANGO_ALLOWED_HOSTS="127.0.0.1",
            # A payment the killed node left PROCESSING is settled by beat after this long
            # (120 s in production), so the bench sees it end within its run.
            PAYMENTS_RECONCILE_AFTER_SECONDS="5",
        )
        manage(env, "migrate", "--noinput")
        django_setup(pg.url, redis.url)
        flight = new_flight("NL")
        from flights.models import FareInventory

        economy = FareInventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY")
        units = economy.capacity + economy.overbook_limit
        tokens = [token for _, token in new_customers(args.clients)]
        try:
            ports = [free_port(), free_port()]
            for name, port in zip(("web1", "web2"), ports, strict=True):
                procs[name] = start_web(env, port, tmp / f"{name}.log", workers=1)
            procs["worker"] = start_worker(env, tmp / "worker.log")
            procs["beat"] = start_beat(env, tmp / "beat.log")
            nginx, port = start_nginx(tmp, ports, ports[1])
            procs["nginx"] = nginx
            time.sleep(2)  # both nodes finish warming up

            def kill_web1() -> None:
                os.killpg(procs["web1"].pid, signal.SIGKILL)

            print(
                f"node loss: {args.clients} clients, {units} units, web1 SIGKILLed when "
                f"{args.kill_after:.0%} are sold; logs in {tmp}",
                flush=True,
            )
            result = asyncio.run(
                sale(
                    f"http://127.0.0.1:{port}",
                    flight.sale_id,
                    tokens,
                    kill_after_orders=round(units * args.kill_after),
                    kill=kill_web1,
                    timeout=args.timeout,
                )
            )
        finally:
            for process in procs.values():
                stop(process)
        problems, figures = verdict(result, flight.sale_id)
    upstreams = Counter()
    with contextlib.suppress(FileNotFoundError):
        for line in (tmp / "access.log").read_text().splitlines():
            parts = line.split(" ", 1)
            upstreams[parts[0]] += 1
    report = {
        "clients": args.clients,
        "units": units,
        "killed_at_s": round(result["killed_at"], 2),
        "elapsed_s": round(result["elapsed"], 1),
        "statuses": result["statuses"],
        "retries": result["retries"],
        "unanswered_last_heard": result["last_answers"],
        "slowest_payment_s": result["slowest_payment_s"],
        "nginx_statuses": dict(upstreams),
        **figures,
        "problems": problems,
    }
    print(json.dumps(report, indent=2))
    if args.save:
        args.save.write_text(json.dumps(report, indent=2) + "\n")
    print("PASS: zero oversell, zero ghost holds, zero lost paid bookings" if not problems
          else "FAIL: " + "; ".join(problems))  # fmt: skip
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
