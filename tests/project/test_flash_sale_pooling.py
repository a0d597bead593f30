"""bench/flash_sale.py's --repeat for (a) to (d): several sales as one figure.  Wins/s is all
the wins over the sum of each sale's time to its last win (not over the first sale's), the
CPU windows add up, and each sale keeps its own flight and winner count for the audit."""

from __future__ import annotations

from bench.flash_sale_scenarios import pooled_sales, summarise


def sale(flight_id: int, records: list[tuple], cpu: float):
    return flight_id, {"records": records, "elapsed": 2.0, "window_cpu": {"web": cpu}}


def test_two_sales_pool_into_one_figure():
    sales = iter(
        [
            # 2 wins, the last answered at 1.0 s; a loser after it
            sale(1, [(0.0, 0.5, 201, True), (0.2, 0.8, 201, True), (1.5, 0.1, 409, False)], 0.3),
            # 1 win, answered at 0.5 s
            sale(2, [(0.1, 0.4, 201, True), (0.0, 0.2, 409, False)], 0.2),
        ]
    )
    pooled, per_sale = pooled_sales(2, lambda: next(sales))
    assert per_sale == [(1, 2), (2, 1)]
    assert pooled["window_cpu"] == {"web": 0.5} and pooled["elapsed"] == 4.0
    summary = summarise("holds", pooled)
    assert summary["requests"] == 5 and summary["wins"] == 3
    assert abs(summary["wins_per_s"] - 3 / 1.5) < 1e-9  # 3 wins over 1.0 s + 0.5 s


def test_one_sale_alone_is_its_own_figure():
    pooled, per_sale = pooled_sales(1, lambda: sale(7, [(0.0, 0.25, 201, True)], 0.1))
    assert per_sale == [(7, 1)]
    assert summarise("holds", pooled)["wins_per_s"] == 4.0
