"""What bench/waiting_room.py proves and prints about a sale: the proof that nobody beyond the
inventory horizon reached a hold, and the figures, one sale's, side by side, or pooled over
repeats."""

from __future__ import annotations

import os
from datetime import timedelta
from typing import TYPE_CHECKING

from bench.waiting_room_crowd import Figures

if TYPE_CHECKING:
    from bench.waiting_room import SaleSettings


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


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
