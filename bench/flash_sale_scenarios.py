"""bench/flash_sale.py's scenarios (a-e, w) and PostgreSQL's own ceiling (pgbench): each runs
the load generator against the stack, measures the CPU of every process group, and prints
its summary."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.flash_sale_fixtures import _sale_filter, audit, new_customers, new_flight
from bench.flash_sale_stack import CpuMeter, Stack, postgres_pids

PG_SQL = Path(__file__).resolve().parent / "pgbench_hold.sql"


# --- statistics --------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms"


# --- scenarios ---------------------------------------------------------------------------------


# The stack's processes while `measured` runs: the load generator reads their CPU time at the
# start gate and after the last answer (the window), so neither the clients' warm-up requests
# (a /healthz each, opening its connection) nor the seconds around the load are counted.
_window_groups: dict[str, list[int]] = {}


def run_load(spec: dict[str, Any], on_start=None) -> dict[str, Any]:
    """Run the load generator on `spec`; `on_start(pid)` is called once it is started (the
    open loop's trace samples its CPU)."""
    spec = {**spec, "cpu_pids": _window_groups}
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parent / "flash_sale_load.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if on_start:
        on_start(proc.pid)
    try:
        stdout, stderr = proc.communicate(json.dumps(spec), timeout=spec["timeout"] + 120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    if proc.returncode != 0:
        raise SystemExit(f"load generator failed:\n{stderr[-3000:]}")
    out = json.loads(stdout)
    if RECORDS_TO is not None and "gate" in out:
        # (start, latency, status, won) with the start on the monotonic clock, one file per
        # load: bench/cpu_by_process.py's `report` takes its window from it.
        path = RECORDS_TO / f"{spec.get('kind', 'load')}-{time.strftime('%H%M%S')}.json"
        rows = [(out["gate"] + t0, lat, st, win) for t0, lat, st, win in out["records"]]
        path.write_text(json.dumps(rows))
    return out


# Set by bench/flash_sale.py's --records: where each load's records are written.
RECORDS_TO: Path | None = None


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


def pooled_sales(runs: int, one_sale) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """`one_sale()` -> (flight id, the load's result), run `runs` times, as one result: the
    records of each sale after those of the sales before it (its starts shifted by their
    times to the last win, so wins/s is all wins over the sum of those times), the elapsed
    times and the CPU windows added up.  Also [(flight id, winners)] per sale, to audit."""
    pooled: dict[str, Any] = {"records": [], "elapsed": 0.0, "window_cpu": {}}
    sales, offset = [], 0.0
    for _ in range(runs):
        flight_id, result = one_sale()
        wins = [r for r in result["records"] if r[3]]
        sales.append((flight_id, len(wins)))
        pooled["records"] += [(offset + t0, lat, st, won) for t0, lat, st, won in result["records"]]
        offset += max((t0 + lat for t0, lat, _, _ in wins), default=0.0)
        pooled["elapsed"] += result["elapsed"]
        for name, seconds in result.get("window_cpu", {}).items():
            pooled["window_cpu"][name] = pooled["window_cpu"].get(name, 0.0) + seconds
    return pooled, sales


def measured_sales(
    stack, runs: int, one_sale, *, name: str, win_label: str = "wins"
) -> tuple[dict[str, Any], list[int], str]:
    """`runs` sales of `one_sale`, pooled and `measured`: (the figures with `audit_ok`, the
    winners of each sale, the audits' text)."""
    sales: list[tuple[int, int]] = []

    def load() -> dict[str, Any]:
        pooled, done = pooled_sales(runs, one_sale)
        sales.extend(done)
        return summarise(_pooled_name(name, runs), pooled, win_label=win_label)

    out = measured(stack, load)
    audits = [audit(pk) for pk, _ in sales]
    out["audit_ok"] = all(ok for ok, _ in audits)
    return out, [w for _, w in sales], "; ".join(t for _, t in audits)


def _runs(args) -> int:
    return max(1, getattr(args, "repeat", 1))


def _pooled_name(name: str, runs: int) -> str:
    return name + (f" ({runs} sales pooled)" if runs > 1 else "")


def scenario_holds(kind: str, args, stack, base_url: str) -> dict[str, Any]:
    """(a), (b), (c) on a fresh flight, `--repeat` times (each its own flight and customers),
    pooled (`pooled_sales`): one sale's wins/s hangs on its last few answers."""
    from flights.models import Seat

    runs = _runs(args)

    def one_sale() -> tuple[int, dict[str, Any]]:
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
        return flight.pk, run_load(spec)

    label = {"seatless": "holds", "seats": "holds", "orders": "orders"}[kind]
    out, _winners, text = measured_sales(stack, runs, one_sale, name=kind, win_label=label)
    print(f"  audit: {text}", flush=True)
    return out


def scenario_one_seat(args, stack, base_url: str) -> dict[str, Any]:
    """(d): 200 clients on one seat of a fresh flight, `--repeat` times, pooled
    (`pooled_sales`): a loser's CPU over one 0.2-s sale is a few hundred ms of the web
    processes' time, and several sales make it a steadier figure.  Each sale has exactly one
    winner, or the audit fails."""
    runs = _runs(args)

    def one_sale() -> tuple[int, dict[str, Any]]:
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
        return flight.pk, run_load(spec)

    out, winners, text = measured_sales(stack, runs, one_sale, name="one-seat")
    if any(w != 1 for w in winners):
        out["audit_ok"] = False
        text += f" -- expected exactly 1 winner a sale, got {winners}"
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
