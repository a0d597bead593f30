"""The open loop's trace (bench/open_loop_trace.py): the generator's send lag, each
request's time split at Django's edges from the access log, and CPU shares from samples."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime

import pytest

from bench.open_loop_trace import access_lines, cpu_shares, generator_view, server_view

WALL = 1_800_000_000.0  # a wall-clock second the traces below were sent around


def trace(i: int, *, scheduled: float, sent: float, latency: float, new=False, connect=0.0):
    return (scheduled, sent, latency, 201, new, connect, f"open-loop-7-{i:06d}", WALL + sent)


def test_the_send_lag_is_the_actual_send_after_the_scheduled_one():
    traces = [trace(i, scheduled=i, sent=i + 0.001, latency=0.01) for i in range(99)]
    traces.append(trace(99, scheduled=99, sent=99.25, latency=0.01, new=True, connect=0.02))
    view = generator_view(traces)
    assert view["arrivals"] == 100
    assert view["send_lag"]["p50"] == pytest.approx(0.001)
    assert view["send_lag"]["p99"] == pytest.approx(0.25)  # the one late send shows
    assert view["new_connections"] == 1 and view["connect"]["max"] == pytest.approx(0.02)


def access_line(request_id: str, *, ended: float, duration_ms: float) -> str:
    return json.dumps(
        {
            "ts": datetime.fromtimestamp(ended, UTC).isoformat(timespec="milliseconds"),
            "logger": "seatkeeper.requests",
            "request_id": request_id,
            "duration_ms": duration_ms,
        }
    )


def test_the_latency_splits_at_djangos_edges(tmp_path):
    # Sent at WALL+1.0, 1.5 s answered; Django began at WALL+2.0 and took 0.1 s: one
    # second before Django (a queue in front of it), 0.4 s after.
    log = tmp_path / "web.log"
    log.write_text(
        "\n".join(
            [
                "granian says hello",
                access_line("open-loop-7-000000", ended=WALL + 2.1, duration_ms=100.0),
                access_line("someone-else-000001", ended=WALL + 2.1, duration_ms=1.0),
                '{"broken": ',
            ]
        )
    )
    lines = access_lines(log, "open-loop-7-")
    assert list(lines) == ["open-loop-7-000000"]
    view = server_view(
        [
            trace(0, scheduled=1.0, sent=1.0, latency=1.5),
            trace(1, scheduled=2.0, sent=2.0, latency=0.01),  # not in the log
        ],
        lines,
    )
    assert view["matched"] == 1 and view["unmatched"] == 1
    assert view["before_django"]["p50"] == pytest.approx(1.0, abs=0.002)
    assert view["in_django"]["p50"] == pytest.approx(0.1)
    assert view["after_django"]["p50"] == pytest.approx(0.4, abs=0.002)
    assert access_lines(tmp_path / "missing.log", "x") == {}


def test_cpu_shares_are_per_interval_with_the_other_tenants_and_idle():
    # Two cores, two 1 s intervals: web uses 0.5 then 1.0 s, the machine 1.0 then 2.0 s.
    samples = [
        (0.0, {"web": 10.0}, 100.0),
        (1.0, {"web": 10.5}, 101.0),
        (2.0, {"web": 11.5}, 103.0),
    ]
    shares = cpu_shares(samples, cores=2)
    assert shares["web"] == {"mean": 75.0, "peak": 100.0}
    assert shares["other"] == {"mean": 75.0, "peak": 100.0}  # busy, but not ours
    assert shares["idle"] == {"mean": 50.0, "peak": 100.0}
    # A group first seen in a later sample (the load generator) counts from there.
    late = [(0.0, {}, 0.0), (1.0, {"loadgen": 5.0}, 0.5), (2.0, {"loadgen": 5.25}, 1.0)]
    assert cpu_shares(late, cores=2)["loadgen"]["peak"] == 25.0


@contextlib.asynccontextmanager
async def hold_server(hold):
    """An aiohttp server answering the generator's hold POSTs with `hold`: (runner, its URL)."""
    from aiohttp import web

    app = web.Application()
    app.router.add_post("/api/bookings", hold)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield runner, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def open_loop(base_url: str, *, rate: float, seconds: float, **more) -> dict:
    """The generator's open-loop job against `base_url`, all arrivals on one flight."""
    return {
        "base_url": base_url,
        "kind": "open_loop",
        "rate": rate,
        "seconds": seconds,
        "seed": 1,
        "arrival_flights": [1] * 200,
        "tokens": ["t"],
        "timeout": 30,
        **more,
    }


def test_an_open_loop_latency_counts_from_the_scheduled_send_not_the_actual_one():
    """Coordinated omission: when the generator sends late (here its own loop is blocked by
    a slow server on the same loop), the customer's wait began at the scheduled time.  Each
    record's latency is the traced send lag plus the latency from the actual send."""
    import asyncio
    import time

    from aiohttp import web

    from bench.flash_sale_load import _load

    async def hold(request):
        time.sleep(0.01)  # blocks the loop the generator shares: its next sends go late
        return web.json_response({}, status=201)

    async def main():
        async with hold_server(hold) as (_, base_url):
            return await _load(open_loop(base_url, rate=300.0, seconds=0.3))

    result = asyncio.run(main())
    records, traces = result["records"], result["traces"]
    assert len(records) == len(traces) > 30
    lags = {round(t[0], 9): t[1] - t[0] for t in traces}
    assert max(lags.values()) > 0.05  # the generator did fall behind its schedule
    by_due = {round(t[0], 9): t for t in traces}
    for due, latency, status, won in records:
        scheduled, sent, from_send = by_due[round(due, 9)][:3]
        assert status == 201 and won
        assert latency == pytest.approx(sent - scheduled + from_send, abs=1e-6)


def test_the_open_loop_holds_no_more_connections_than_its_bound():
    """granian's backpressure counts open connections; an unbounded generator opened one
    per concurrent request and starved the server's accept loop.  With the bound, requests
    beyond it wait for a connection in the generator (and that wait is in their latency)."""
    import asyncio

    from aiohttp import web

    from bench.flash_sale_load import _load

    open_now = {"max": 0}

    async def hold(request):
        await asyncio.sleep(0.2)  # slow answers: concurrency builds up
        return web.json_response({}, status=201)

    async def main():
        async with hold_server(hold) as (runner, base_url):

            async def count():
                while True:
                    n = len(runner.server.connections)
                    open_now["max"] = max(open_now["max"], n)
                    await asyncio.sleep(0.005)

            counter = asyncio.create_task(count())
            try:
                return await _load(open_loop(base_url, rate=200.0, seconds=0.5, connections=5))
            finally:
                counter.cancel()

    result = asyncio.run(main())
    assert len(result["records"]) > 60  # ~100 arrivals, ~40 at once unbounded
    assert 0 < open_now["max"] <= 5
    # Arrivals that waited for one of the 5 connections count that wait.
    assert max(latency for _, latency, _, _ in result["records"]) > 0.5


def test_blame_splits_the_cores_between_the_slow_intervals_and_the_calm_ones():
    from bench.open_loop_blame import blame

    # Ten 0.1 s intervals from t=100 (the run began at 100): the worker burns a whole core in
    # the fourth and fifth, the web a steady half core; the machine adds 0.02 s of others.
    samples, worker, web, machine = [], 0.0, 0.0, 0.0
    for i in range(11):
        samples.append((100 + i / 10, {"web": web, "worker": worker}, machine))
        burst = 0.1 if i in (3, 4) else 0.0
        worker, web = worker + burst, web + 0.05
        machine += burst + 0.05 + 0.02
    # CPU stalls (µs) only in the burst, no I/O stall.
    pressure = [(100 + i / 10, 50_000.0 * sum(1 for j in (3, 4) if j < i), 7.0) for i in range(11)]
    records = [(0.05 + i / 10, 0.01, 201, True) for i in range(10)]
    records.append((0.32, 0.12, 201, True))  # waited from 0.32 to 0.44 s: intervals 3 and 4
    view = blame(records, samples, pressure, began=100.0)
    assert view["slow_requests"] == 1
    assert view["slow"]["intervals"] == 2 and view["calm"]["intervals"] == 8
    slow, calm = view["slow"]["cpu"], view["calm"]["cpu"]
    assert slow["worker"] == pytest.approx(100.0) and calm["worker"] == pytest.approx(0.0)
    assert slow["web"] == pytest.approx(50.0) and calm["web"] == pytest.approx(50.0)
    assert slow["other"] == pytest.approx(20.0) and slow["machine"] == pytest.approx(170.0)
    assert slow["psi cpu"] == pytest.approx(50.0) and calm["psi cpu"] == pytest.approx(0.0)
    assert slow["psi io"] == pytest.approx(0.0)

    # Control: with nothing over the threshold every interval is calm, and the worker's burst
    # is averaged into them (what the 2-s timeline showed).
    quick = [r for r in records if r[1] < 0.05]
    control = blame(quick, samples, pressure, began=100.0)
    assert control["slow"]["intervals"] == 0 and control["calm"]["intervals"] == 10
    assert control["calm"]["cpu"]["worker"] == pytest.approx(20.0)


def test_the_pressure_is_read_from_psi_files_and_absent_without_them(tmp_path):
    from bench.open_loop_blame import read_pressure

    (tmp_path / "cpu").write_text(
        "some avg10=0.14 avg60=2.33 avg300=1.21 total=5001703\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    (tmp_path / "io").write_text("some avg10=0.00 avg60=0.67 avg300=0.41 total=1859633\n")
    assert read_pressure(tmp_path) == (5001703.0, 1859633.0)
    assert read_pressure(tmp_path / "nowhere") is None
