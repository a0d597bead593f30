"""bench/flash_sale.py's load generator, a separate process (asyncio + aiohttp, bounded in
requests and seconds; the open loop on its own lean client, bench/open_loop_client.py):
`run_load` starts it as a script, hands it the spec on stdin and reads the records on stdout.
The stack's CPU window is read here, at the start gate and after the last answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CARD = "4242424242424242"  # the sandbox's approved card
OPEN_LOOP_CONNECTIONS = 256  # under one granian worker's 512-connection backpressure


def seatless_body(flight_id: int, index: int) -> dict[str, Any]:
    return {
        "flightId": flight_id,
        "fareClass": "ECONOMY",
        "passengers": 1,
        "passengerNames": [f"Buyer {index}"],  # named, or the payment is refused
    }


async def _load(spec: dict[str, Any]) -> dict[str, Any]:
    import aiohttp

    base = spec["base_url"]
    kind = spec["kind"]
    deadline = time.monotonic() + spec["timeout"]
    records: list[tuple[float, float, int, bool]] = []  # start, latency, status, win
    budget = {"left": spec.get("requests", 0)}
    start_gate = asyncio.Event()
    traces: list[tuple] = []  # the open loop's, bench/open_loop_trace.py's Trace
    # The open loop's connections are bounded, as a proxy's are: granian's --backpressure
    # (backlog / workers = 512 a worker) counts *open connections*, idle keep-alive ones
    # too, and an unbounded client that opened one per concurrent request during a queue
    # (1,400+) left the rest in the accept queue until granian dropped idle ones after its
    # 30 s --http1-header-read-timeout: the 22-31 s losers of 6 Dec 2026.  A request that
    # waits here for a connection still counts its wait (latency from the schedule).
    limit = spec.get("connections", OPEN_LOOP_CONNECTIONS) if kind == "open_loop" else 0
    if kind == "open_loop" and spec.get("client", "lean") == "lean":
        # aiohttp's ~0.8 ms CPU a request competed with the stack for the two cores.
        from bench.open_loop_client import run_open_loop

        return await run_open_loop(spec, limit=limit, body=seatless_body)
    connector = aiohttp.TCPConnector(limit=limit, force_close=False)
    timeout = aiohttp.ClientTimeout(total=60)
    session_kw = {"connector": connector, "timeout": timeout, "trace_configs": [new_connections()]}

    async with aiohttp.ClientSession(**session_kw) as session:

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

        async def recorded_post(path: str, body: dict[str, Any], token: str) -> tuple[int, Any]:
            """POST `body` as the customer, record (start, latency, status, won = a 201)."""
            t0 = time.perf_counter()
            status, raw, _, lat = await call("POST", path, json=body, headers=auth(token))
            records.append((t0, lat, status, status == 201))
            return status, raw

        def seat_body(seat: str) -> dict[str, Any]:
            return {
                "flightId": spec["flight_id"],
                "fareClass": "ECONOMY",
                "seats": [seat],
                "exitRowConfirmed": True,  # the seat may be in an exit row
            }

        async def seatless(index: int, token: str) -> None:
            await call("GET", "/healthz")  # open the keep-alive connection before the gate
            await start_gate.wait()
            body = seatless_body(spec["flight_id"], index)
            while take():
                await recorded_post("/api/bookings", body, token)

        async def seats(index: int, token: str) -> None:
            await call("GET", "/healthz")
            rng = random.Random(index)
            candidates = list(spec["seats"])
            rng.shuffle(candidates)
            await start_gate.wait()
            while candidates and take():
                await recorded_post("/api/bookings", seat_body(candidates.pop()), token)

        async def orders(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            body = seatless_body(spec["flight_id"], index)
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
                await recorded_post("/api/bookings/best-available", body, token)

        async def one_seat(index: int, token: str) -> None:
            await call("GET", "/healthz")
            await start_gate.wait()
            await recorded_post("/api/bookings", seat_body(spec["seat"]), token)

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
            sent whether or not earlier ones were answered.  A latency counts from the
            arrival's scheduled time, not from when the generator got round to sending it
            (a late send is a wait the customer had too: no coordinated omission); the
            send lag and the connection each request took are traced beside it."""
            from bench.open_loop import poisson_schedule

            tokens, flights = spec["tokens"], spec["arrival_flights"]
            seed = spec.get("seed", 7)
            schedule = poisson_schedule(rate=spec["rate"], seconds=spec["seconds"], seed=seed)
            pending = []

            async def arrival(i: int, due: float) -> None:
                sent, sent_wall = time.perf_counter(), time.time()
                request_id = f"open-loop-{seed}-{i:06d}"
                conn: dict[str, float] = {}
                status, _, _, lat = await call(
                    "POST",
                    "/api/bookings",
                    json=seatless_body(flights[i], i),
                    headers={**auth(tokens[i % len(tokens)]), "X-Request-ID": request_id},
                    trace_request_ctx=conn,
                )
                records.append((due, sent + lat - due, status, status == 201))
                connect = conn.get("connected", 0.0) - conn.get("connecting", 0.0)
                traces.append(
                    (due, sent, lat, status, "connecting" in conn, connect, request_id, sent_wall)
                )

            await start_gate.wait()
            began = time.perf_counter()
            for i, at in enumerate(schedule):
                delay = began + at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                pending.append(asyncio.create_task(arrival(i, began + at)))
            await asyncio.gather(*pending)

        if kind == "open_loop":
            tasks = [asyncio.create_task(open_loop())]
            await asyncio.sleep(0.2)
            started, started_wall, cpu = time.perf_counter(), time.time(), time.process_time()
            start_gate.set()
            await asyncio.gather(*tasks)
            elapsed = time.perf_counter() - started
            return {
                "elapsed": elapsed,
                "started_wall": started_wall,
                "generator_cpu": time.process_time() - cpu,
                "records": [(t0 - started, lat, st, win) for t0, lat, st, win in records],
                "traces": [(due - started, sent - started, *rest) for due, sent, *rest in traces],
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
        window = CpuWindow(spec.get("cpu_pids", {}))
        started = time.perf_counter()
        start_gate.set()
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
        window_cpu = window.seconds()
    return {
        "elapsed": elapsed,
        # perf_counter is CLOCK_MONOTONIC on Linux: bench/cpu_by_process.py lines the
        # records up with its samples by it.
        "gate": started,
        "records": [(t0 - started, lat, status, win) for t0, lat, status, win in records],
        "window_cpu": window_cpu,
    }


def new_connections():
    """An aiohttp trace that stamps, in a request's `trace_request_ctx` dict (when it has
    one), when a new TCP connection for it began and was made: no stamp, a reused one."""
    import aiohttp

    async def connecting(session, ctx, params) -> None:
        if isinstance(ctx.trace_request_ctx, dict):
            ctx.trace_request_ctx["connecting"] = time.perf_counter()

    async def connected(session, ctx, params) -> None:
        if isinstance(ctx.trace_request_ctx, dict):
            ctx.trace_request_ctx["connected"] = time.perf_counter()

    trace = aiohttp.TraceConfig()
    trace.on_connection_create_start.append(connecting)
    trace.on_connection_create_end.append(connected)
    return trace


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


class CpuWindow:
    """The CPU seconds each group's processes use from now on, to the nanosecond: the sum over
    their threads of the scheduler's run time (/proc/PID/task/TID/schedstat).  `cpu_seconds`
    reads whole processes in clock ticks (10 ms): over (d)'s 0.2-s window of 200 requests a
    tick per process is 0.05 ms a request, the size of the differences being measured.

    A thread that ends inside the window takes its time with it (granian's HTTP threads live
    for the process); one started inside it counts from zero.  Where schedstat cannot be read
    (a kernel without it), the process is read in ticks instead."""

    def __init__(self, groups: dict[str, list[int]]):
        self.groups = groups
        self.before = {name: self._threads(pids) for name, pids in groups.items()}

    @staticmethod
    def _threads(pids: list[int]) -> dict[tuple[int, int], float]:
        import psutil

        out: dict[tuple[int, int], float] = {}
        for pid in pids:
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                        out[(pid, int(tid))] = int(f.read().split()[0]) / 1e9
                except FileNotFoundError:  # the thread ended meanwhile
                    continue
                except OSError:  # no schedstat here: the whole process, in ticks
                    with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                        times = psutil.Process(pid).cpu_times()
                        out[(pid, -1)] = times.user + times.system
                    break
        return out

    def seconds(self) -> dict[str, float]:
        out = {}
        for name, pids in self.groups.items():
            before, now = self.before[name], self._threads(pids)
            out[name] = sum(max(0.0, t - before.get(key, 0.0)) for key, t in now.items())
        return out


def load_main() -> None:
    sys.path.insert(0, str(ROOT))  # run as a script: `bench` (the open loop's schedule)
    spec = json.load(sys.stdin)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    json.dump(asyncio.run(_load(spec)), sys.stdout)


if __name__ == "__main__":
    load_main()
