"""bench/waiting_room.py's crowd (asyncio, one process): customers who pre-queue, wait on the
queue websocket, and hold once admitted; a few bots who hold without queueing; and the figures
they record."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta


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
