"""Scenario (o) of bench/flash_sale.py: holds that arrive at a fixed rate, not from clients.

A closed loop (N clients, each sending its next request when the last one is answered) can
never show what a customer waits at a given rate: when the server is the bottleneck, the
clients simply wait longer and the rate falls to match (Little's law).  Here arrivals are a
Poisson process at a fixed mean rate, each sent whether or not earlier ones have been
answered, at 50 % and 80 % of the capacity scenario (a) measured (its requests/s: losers cost
too).  Each rate runs `--open-loop-seconds` over fresh flights sized so that about
`--open-loop-oversubscribe` arrivals come per unit, so every flight sells out and both
winners and losers are measured; `--repeat` runs each rate that many times (fresh flights
each) and pools the latencies, since a p99.9 needs more than one sale's 171 winners.

The arithmetic (the schedule, the pooling) is plain functions, tested in
tests/project/test_open_loop_bench.py; the HTTP side is the load generator in flash_sale.py.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable
from typing import Any

from bench.flash_sale import pct

UNITS_PER_FLIGHT = 171  # the demo A320's ECONOMY: 168 seats + 3 overbooking
THROTTLE_SAFE = 20
QUANTILES = (("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999))

# (start offset s, latency s, HTTP status, won) as the load generator records a request.
Record = tuple[float, float, int, bool]


def poisson_schedule(*, rate: float, seconds: float, seed: int = 7) -> list[float]:
    """Arrival times (seconds from the start, ascending, all < `seconds`) of a Poisson
    process of mean `rate` per second: exponential gaps, independent of any answer."""
    if rate <= 0 or seconds <= 0:
        return []
    rng = random.Random(seed)
    out = []
    at = rng.expovariate(rate)
    while at < seconds:
        out.append(at)
        at += rng.expovariate(rate)
    return out


def flights_needed(*, rate: float, seconds: float, oversubscribe: float) -> int:
    """Flights for one run: about `oversubscribe` arrivals per unit, at least one."""
    return max(1, math.ceil(rate * seconds / (UNITS_PER_FLIGHT * oversubscribe)))


def arrival_flights(arrivals: int, flights: list[int], *, oversubscribe: float, mix: str):
    """The flight each arrival asks for.

    "together": round robin, so every flight sells out at about the same moment: the run's
    first part is all winners and the rest all losers, and a rate that is 80 % of a mixed
    capacity is far more than that while everyone wins (a winning hold costs about twice a
    loser's CPU).  "steady": one flight is on sale at a time and gets every
    `oversubscribe`-th arrival (a hot row, as in a real sale and in (a)); the others ask for
    the flight sold out before it, so winners are 1/`oversubscribe` of the arrivals all
    through the run (the first flight takes both streams until it sells out)."""
    if mix == "together":
        return [flights[i % len(flights)] for i in range(arrivals)]
    out = []
    fresh = 0  # arrivals sent to the flight on sale so far
    for i in range(arrivals):
        on_sale = min(fresh // UNITS_PER_FLIGHT, len(flights) - 1)
        if math.floor((i + 1) / oversubscribe) > math.floor(i / oversubscribe):
            out.append(flights[on_sale])
            fresh += 1
        else:
            out.append(flights[max(0, on_sale - 1)])
    return out


def customers_needed(rate: float, args, seconds: float | None = None, flights: int = 1) -> int:
    """Customers for one run: each sends at most THROTTLE_SAFE holds, under the holds
    throttle's default 30/min for runs up to a minute (a 429 is not what is measured).

    Arrival i is customer i % customers and (round robin) flight i % flights: with a
    common factor, a customer meets the same few flights over and over, and past the
    hold cap (9 units per customer per sale) its holds are 409s while seats are left.  19
    flights and 323 = 17 x 19 customers sold 153 of each flight's 171 units and turned the
    rest of the run into expensive cap refusals (a queue of seconds, 6 Dec 2026); so the
    count is made coprime with the flights'."""
    seconds = seconds or args.open_loop_seconds
    customers = max(args.clients, -(-round(rate * seconds) // THROTTLE_SAFE))
    while math.gcd(customers, flights) != 1:
        customers += 1
    return customers


def pooled(runs: Iterable[list[Record]]) -> dict[str, dict[str, Any]]:
    """Winners' and losers' latency percentiles over every run's records together (not an
    average of each run's percentiles, which would hide the rare slow request)."""
    latencies: dict[str, list[float]] = {"winners": [], "losers": []}
    for records in runs:
        for _, latency, _, won in records:
            latencies["winners" if won else "losers"].append(latency)
    return {
        label: {"count": len(values), **{name: pct(values, q) for name, q in QUANTILES}}
        for label, values in latencies.items()
    }


def traced_run(args, stack, spec: dict[str, Any]) -> dict[str, Any]:
    """run_load with bench/open_loop_trace.py's three views of the run, printed and kept
    in the result as "trace" (the per-arrival traces themselves are dropped)."""
    from bench.flash_sale import run_load
    from bench.open_loop_blame import blame, print_blame
    from bench.open_loop_trace import (
        Sampler,
        access_lines,
        generator_view,
        print_view,
        process_groups,
        server_view,
        timeline,
    )

    database = args.database_url.rsplit("/", 1)[1]
    loadgen: list[int] = []
    found: list[tuple[float, dict[str, list[int]]]] = []

    def groups() -> dict[str, list[int]]:
        # Walking every process costs a few ms: at 10 samples a second, once a second will do
        # (the load generator and the run's backends start in the first second).
        if not found or time.monotonic() - found[-1][0] > 1.0:
            found.append(
                (time.monotonic(), process_groups(stack, loadgen[0] if loadgen else None, database))
            )
        return found[-1][1]

    sampler = Sampler(
        groups,
        database_url=args.database_url,
        interval=0.1,  # fine enough for open_loop_blame to see a burst of a few hundred ms
    )
    sampler.start()
    try:
        result = run_load(spec, on_start=loadgen.append)
    finally:
        sampled = sampler.stop()
    traces = result.pop("traces", [])
    began = time.monotonic() - (time.time() - result["started_wall"])  # the start gate
    view: dict[str, Any] = {
        "generator": generator_view(traces),
        "sampled": sampled,
        "timeline": timeline(result["records"], sampler.samples, began=began),
    }
    if stack:
        lines = access_lines(stack.logdir / "web.log", f"open-loop-{spec['seed']}-")
        view["server"] = server_view(traces, lines)
    view["blame"] = blame(result["records"], sampler.samples, sampler.pressure, began=began)
    print_view(view)
    print_blame(view["blame"])
    result["trace"] = view
    return result


def one_run(
    args, stack, base_url: str, *, rate: float, seed: int, seconds: float | None = None
) -> dict[str, Any]:
    """One open-loop run on fresh flights (the result's "flight_ids", for the audit)."""
    from bench.flash_sale import new_customers, new_flight, run_load

    seconds = seconds or args.open_loop_seconds
    oversubscribe = args.open_loop_oversubscribe
    count = flights_needed(rate=rate, seconds=seconds, oversubscribe=oversubscribe)
    ids = [new_flight("OL").pk for _ in range(count)]
    arrivals = len(poisson_schedule(rate=rate, seconds=seconds, seed=seed))
    spec = {
        "base_url": base_url,
        "kind": "open_loop",
        "rate": rate,
        "seconds": seconds,
        "seed": seed,
        "arrival_flights": arrival_flights(
            arrivals, ids, oversubscribe=oversubscribe, mix=args.open_loop_mix
        ),
        "tokens": [t for _, t in new_customers(customers_needed(rate, args, seconds, count))],
        "timeout": seconds + 60,
        "client": getattr(args, "open_loop_client", "lean"),
    }
    result = traced_run(args, stack, spec) if args.open_loop_trace else run_load(spec)
    return {**result, "flight_ids": ids}


def scenario_open_loop(args, stack, base_url: str, capacity: float | None) -> dict[str, Any]:
    """(o): every rate of --open-loop-fractions (of `capacity`, or --open-loop-capacity),
    --repeat runs each, winners' and losers' p50/p99/p99.9 pooled over the runs."""
    from bench.flash_sale import audit, measured, ms

    capacity = args.open_loop_capacity or capacity
    if not capacity:
        raise SystemExit("(o) needs (a) first in --scenarios, or --open-loop-capacity")
    results: dict[str, Any] = {}
    if args.open_loop_sustained:
        from bench.open_loop_capacity import find_sustained

        print(f"  sustained capacity: steps from 60 % of {capacity:.1f} req/s", flush=True)
        results["sustained"] = find_sustained(args, stack, base_url, start=0.6 * capacity)
        capacity = results["sustained"]["capacity"]
        if not capacity:
            return results
    for fraction in (float(f) for f in args.open_loop_fractions.split(",")):
        rate = capacity * fraction
        count = flights_needed(
            rate=rate, seconds=args.open_loop_seconds, oversubscribe=args.open_loop_oversubscribe
        )
        print(
            f"  {fraction:.0%} of {capacity:.1f} req/s = {rate:.1f} arrivals/s, "
            f"{args.open_loop_seconds:.0f} s x {args.repeat} run(s), {count} flights each",
            flush=True,
        )
        runs: list[list[Record]] = []
        flights: list[int] = []

        def run_all(rate=rate, runs=runs, flights=flights):
            traces: list[dict[str, Any] | None] = []
            requests = 0
            generator_cpu = 0.0
            for repeat in range(args.repeat):
                result = one_run(args, stack, base_url, rate=rate, seed=7 + repeat)
                flights.extend(result["flight_ids"])
                runs.append(result["records"])
                traces.append(result.get("trace"))
                requests += len(result["records"])
                generator_cpu += result.get("generator_cpu", 0.0)
                late = sum(1 for r in result["records"] if r[2] == 599)
                won = sum(1 for r in result["records"] if r[3])
                own = result.get("generator_cpu", 0.0) * 1000 / max(1, len(result["records"]))
                print(
                    f"    run {repeat + 1}: {len(result['records'])} arrivals, {late} failed, "
                    f"{won} won; generator CPU {own:.3f} ms a request (gate to last answer)"
                )
            out = {"requests": requests, "rate": rate, **pooled(runs), "records": runs}
            out["generator_cpu_ms_per_request"] = generator_cpu * 1000 / max(1, requests)
            if args.open_loop_trace:
                out["trace"] = traces
            for label in ("winners", "losers"):
                f = out[label]
                print(
                    f"  {label} {f['count']}: p50 {ms(f['p50'])} p99 {ms(f['p99'])} "
                    f"p99.9 {ms(f['p99.9'])}",
                    flush=True,
                )
            return out

        out = measured(stack, run_all)
        out["audit_ok"] = all(ok for ok, _ in (audit(f) for f in flights))
        print(f"  audit: {'OK' if out['audit_ok'] else 'FAILED'} on {len(flights)} flights")
        results[f"{fraction:.2f}"] = out
    return results
