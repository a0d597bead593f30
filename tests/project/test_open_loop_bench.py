"""The open-loop scenario's arithmetic (bench/open_loop.py): the Poisson schedule keeps its
mean rate and does not wait for answers, and percentiles pool the runs' requests."""

from __future__ import annotations

import itertools
import statistics
from types import SimpleNamespace

from bench.flash_sale import pct as percentile
from bench.open_loop import customers_needed, flights_needed, poisson_schedule, pooled


def test_the_schedule_keeps_its_mean_rate_and_poisson_gaps():
    schedule = poisson_schedule(rate=200.0, seconds=60.0, seed=3)
    assert schedule == sorted(schedule) and schedule[0] > 0 and schedule[-1] < 60.0
    # 12,000 arrivals expected; a Poisson count's standard deviation is sqrt(12,000) ~ 110.
    assert abs(len(schedule) - 12_000) < 5 * 110
    gaps = [b - a for a, b in itertools.pairwise(schedule)]
    # Exponential gaps: mean 1/rate and a standard deviation equal to the mean (a fixed
    # interval, a closed loop's pace, would have none).
    assert abs(statistics.mean(gaps) - 1 / 200) < 0.05 / 200
    assert abs(statistics.stdev(gaps) / statistics.mean(gaps) - 1) < 0.05


def test_the_schedule_is_fixed_in_advance_per_seed():
    # Arrival times depend on the rate and the seed only, never on how fast answers come:
    # that is what makes the loop open.  Repeats use other seeds, so they are other samples.
    assert poisson_schedule(rate=50, seconds=5, seed=1) == poisson_schedule(
        rate=50, seconds=5, seed=1
    )
    assert poisson_schedule(rate=50, seconds=5, seed=1) != poisson_schedule(
        rate=50, seconds=5, seed=2
    )
    assert poisson_schedule(rate=0, seconds=5) == [] == poisson_schedule(rate=5, seconds=0)


def test_percentiles_pool_every_run_rather_than_averaging_them():
    fast = [(0.0, 0.010, 201, True)] * 99 + [(0.0, 0.020, 409, False)] * 100
    slow = [(0.0, 0.010, 201, True)] * 98 + [(0.0, 2.0, 201, True)] * 2
    out = pooled([fast, slow])
    assert out["winners"]["count"] == 199 and out["losers"]["count"] == 100
    assert out["winners"]["p50"] == 0.010
    # 2 slow winners in 199: above the 99th percentile's rank, so p99 shows them; the mean
    # of the two runs' p99 (10 ms and 2 s) would be neither.
    assert out["winners"]["p99"] == 2.0 and out["winners"]["p99.9"] == 2.0
    assert out["losers"] == {"count": 100, "p50": 0.020, "p99": 0.020, "p99.9": 0.020}
    assert pooled([[]])["winners"] == {"count": 0, "p50": None, "p99": None, "p99.9": None}


def test_percentile_is_the_nearest_rank():
    values = [float(v) for v in range(1, 1001)]
    assert percentile(values, 0.5) == 501.0
    assert percentile(values, 0.99) == 991.0
    assert percentile(values, 0.999) == 1000.0
    assert percentile([], 0.5) is None


def test_runs_are_sized_to_sell_out_and_stay_under_the_throttle():
    # 80 arrivals/s for 20 s at 2 arrivals per unit: 1,600 arrivals over 171-unit flights.
    assert flights_needed(rate=80, seconds=20, oversubscribe=2) == 5
    assert flights_needed(rate=1, seconds=1, oversubscribe=2) == 1
    args = SimpleNamespace(clients=100, open_loop_seconds=20.0)
    assert customers_needed(80, args) == 100
    args = SimpleNamespace(clients=100, open_loop_seconds=60.0)
    assert customers_needed(80, args) * 20 >= 80 * 60  # at most 20 holds per customer


def test_a_steady_mix_keeps_the_winners_share_all_through_the_run():
    from bench.open_loop import UNITS_PER_FLIGHT, arrival_flights

    flights = [11, 12, 13, 14, 15, 16]
    arrivals = 2 * UNITS_PER_FLIGHT * len(flights)
    steady = arrival_flights(arrivals, flights, oversubscribe=2.0, mix="steady")
    sold: dict[int, int] = {}
    wins = []
    for flight in steady:  # the sale as the server sees it: a flight's first 171 win
        wins.append(sold.get(flight, 0) < UNITS_PER_FLIGHT)
        sold[flight] = sold.get(flight, 0) + 1
    # After the first flight's start-up (both streams on it), every stretch of 100
    # arrivals is half winners; every flight sold out, each to about two per unit.
    for start in range(2 * UNITS_PER_FLIGHT, arrivals - 100, 100):
        assert 0.4 <= sum(wins[start : start + 100]) / 100 <= 0.6
    assert sum(wins) == UNITS_PER_FLIGHT * len(flights)
    assert set(steady) == set(flights)
    # Round robin ("together"): the first half all winners, the second all losers.
    together = arrival_flights(arrivals, flights, oversubscribe=2.0, mix="together")
    sold.clear()
    wins = []
    for flight in together:
        wins.append(sold.get(flight, 0) < UNITS_PER_FLIGHT)
        sold[flight] = sold.get(flight, 0) + 1
    assert all(wins[: arrivals // 2]) and not any(wins[arrivals // 2 :])


def test_the_sustained_capacity_search_climbs_bisects_and_confirms():
    from bench.open_loop_capacity import MAX_STEPS, next_rate, sustained

    assert next_rate(100.0, []) == 100.0
    assert next_rate(100.0, [(100.0, True)]) == 120.0  # climb while kept up
    assert next_rate(100.0, [(100.0, False)]) == 100.0 / 1.2  # down while none kept up
    # Bracketed between 120 (kept up) and 144 (fell behind): the geometric middle, and
    # once the bracket is under 6 %, the best rate once more before it is the answer.
    history = [(100.0, True), (120.0, True), (144.0, False)]
    assert round(next_rate(100.0, history), 1) == 131.5
    history += [(131.5, True), (137.6, False)]
    assert next_rate(100.0, history) == 131.5
    assert next_rate(100.0, [*history, (131.5, True)]) is None
    assert sustained([*history, (131.5, True)]) == 131.5
    # The second run fell behind: 131.5 is a failed rate, the search goes on below it.
    history.append((131.5, False))
    assert sustained(history) == 120.0
    assert round(next_rate(100.0, history), 1) == round((120.0 * 131.5) ** 0.5, 1)
    assert sustained([(100.0, False)]) is None
    # A failure only below a kept-up rate (a neighbour's burst) does not end the climb.
    assert next_rate(100.0, [(100.0, True), (80.0, False)]) == 120.0
    assert next_rate(100.0, [(100.0 * 1.2**i, True) for i in range(MAX_STEPS)]) is None


def test_kept_up_means_no_failure_a_short_p99_and_no_growing_queue():
    from bench.open_loop_capacity import kept_up

    steady = [(i / 100, 0.01, 201, True) for i in range(800)]  # 8 s at 100/s, 10 ms each
    assert kept_up(steady, 8.0)
    assert not kept_up([*steady[:-1], (7.99, 0.01, 599, False)], 8.0)
    assert not kept_up([*steady[:-20], *[(7.9, 0.9, 409, False)] * 20], 8.0)  # p99 0.9 s
    # A queue that grows through the step (5 % over capacity): 10 ms at first, 50 ms more
    # each second after 2 s; its p99 (~310 ms) is under the bound, its last quarter is not
    # like its second.
    growing = [(i / 100, 0.01 + 0.05 * max(0.0, i / 100 - 2), 201, True) for i in range(800)]
    assert max(lat for _, lat, _, _ in growing) < 0.5
    assert not kept_up(growing, 8.0)
    assert not kept_up([], 8.0)


def test_a_short_burst_under_the_floor_is_not_a_growing_queue():
    """A neighbour's burst lifts the last quarter's p90 from 15 to 90 ms: still kept up (it
    pinned a capacity search 30 % low once).  The control, the same step with the last
    quarter at 150 ms, is a growing queue: only the floor tells them apart."""
    from bench.open_loop_capacity import GROWTH_FLOOR, kept_up

    def step(last_quarter: float) -> list:
        return [(i / 100, last_quarter if i >= 600 else 0.015, 201, True) for i in range(800)]

    assert 0.09 < GROWTH_FLOOR < 0.15
    assert 0.09 > 2 * 0.015 + 0.05  # the ratio test alone would call the burst a queue
    assert kept_up(step(0.09), 8.0)
    assert not kept_up(step(0.15), 8.0)


def test_no_customer_meets_one_flight_past_the_hold_cap():
    # 19 flights, 6,444 arrivals: 323 customers would be 17 x 19, each customer always on
    # the same flight, 20 holds where the cap is 9.  The count is made coprime instead.
    from bench.open_loop import arrival_flights, customers_needed

    args = SimpleNamespace(clients=100, open_loop_seconds=20.0)
    customers = customers_needed(322.2, args, 20.0, 19)
    assert customers >= 323 and customers % 19 != 0
    flights = list(range(19))
    for mix in ("together", "steady"):
        per_pair: dict[tuple[int, int], int] = {}
        for i, flight in enumerate(arrival_flights(6444, flights, oversubscribe=2, mix=mix)):
            key = (i % customers, flight)
            per_pair[key] = per_pair.get(key, 0) + 1
        assert max(per_pair.values()) <= 9, mix
