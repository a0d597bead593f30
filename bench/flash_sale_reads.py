"""bench/flash_sale.py's scenario (e): seat map reads, cold, warm and 304."""

from __future__ import annotations

import statistics
from typing import Any

from bench.flash_sale_fixtures import new_flight
from bench.flash_sale_scenarios import measured, run_load, summarise


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
    spec = {**common, "flight_queue": [hot], "tokens": clients, "requests": args.read_requests}
    if etag:
        results |= warm_and_not_modified(stack, spec, etag, args.read_blocks)
    else:
        print(f"  warm: {args.read_requests} reads of one cached flight, 8 clients", flush=True)
        results["warm"] = measured(
            stack, lambda: summarise("reads-warm", run_load(spec), win_label="ok")
        )
        print("  304: the server sent no ETag; skipped", flush=True)
    cold, warm = results["cold"]["all_p50"], results["warm"]["all_p50"]
    if cold and warm:
        print(f"  cold p50 / warm p50 = {cold / warm:.1f}x", flush=True)
    return results


def warm_and_not_modified(stack, spec: dict[str, Any], etag: str, blocks: int) -> dict[str, Any]:
    """The warm read and its 304, in `blocks` pairs of loads taken in turn (warm first, then
    304 first, ...), each kind's pooled: the machine's drift over the run falls on both alike.

    Run one after the other, the two differ by less than that drift (the 304 spares only the
    body: its Redis read and its bytes, ~0.03 ms), so either order alone can put the 304
    above the 200.  Prints each pair's 304 ÷ warm web CPU, and the pooled one."""
    per_block = max(1, spec["requests"] // blocks)
    loads = {
        "warm": {**spec, "requests": per_block},
        "not_modified": {**spec, "requests": per_block, "etag": etag},
    }
    print(
        f"  warm and 304 (If-None-Match: {etag}): {blocks} pairs of {per_block} reads each of "
        "one cached flight, 8 clients, taken in turn",
        flush=True,
    )
    parts: dict[str, list[dict[str, Any]]] = {"warm": [], "not_modified": []}
    for block in range(blocks):
        for kind in ("warm", "not_modified")[:: 1 if block % 2 == 0 else -1]:
            name = f"reads-{'warm' if kind == 'warm' else '304'} {block + 1}/{blocks}"
            load = loads[kind]
            parts[kind].append(
                measured(
                    stack,
                    lambda name=name, load=load: summarise(name, run_load(load), win_label="ok"),
                )
            )
    out = {kind: pooled_reads(found) for kind, found in parts.items()}
    pairs = [
        web_ms(n) / web_ms(w)
        for w, n in zip(parts["warm"], parts["not_modified"], strict=True)
        if web_ms(w) and web_ms(n) is not None
    ]
    warm, not_modified = web_ms(out["warm"]), web_ms(out["not_modified"])
    if warm and not_modified is not None:
        print(
            f"  pooled web CPU ms per read: warm {warm:.3f}, 304 {not_modified:.3f} "
            f"(304 ÷ warm {not_modified / warm:.2f}; by pair "
            + ", ".join(f"{r:.2f}" for r in pairs)
            + ")",
            flush=True,
        )
    return out


def web_ms(result: dict[str, Any]) -> float | None:
    """The web processes' CPU ms per request in the load's window."""
    return result.get("window_cpu_ms_per_request", {}).get("web")


def pooled_reads(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Loads of one kind as one figure: requests, elapsed time and window CPU added up; the
    p50 is the median of the loads' own (each load's figures stay under `loads`)."""
    requests = sum(f["requests"] for f in found)
    p50s = [f["all_p50"] for f in found if f["all_p50"] is not None]
    elapsed = sum(f["elapsed_s"] for f in found)
    window: dict[str, float] = {}
    for f in found:
        for name, seconds in f.get("window_cpu", {}).items():
            window[name] = window.get(name, 0.0) + seconds
    return {
        "scenario": found[0]["scenario"].split(" ")[0] + f" ({len(found)} loads pooled)",
        "requests": requests,
        "wins": sum(f["wins"] for f in found),
        "elapsed_s": elapsed,
        "req_per_s": requests / elapsed if elapsed else 0.0,
        "all_p50": statistics.median_low(p50s) if p50s else None,
        "window_cpu": window,
        "window_cpu_ms_per_request": {k: v * 1000 / requests for k, v in window.items()},
        "loads": found,
    }
