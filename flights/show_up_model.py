"""How many passengers turn up: a binomial model of show-ups, and the overbook limit it
suggests.  Pure functions (numbers in, numbers out), no database, no scipy.

Each of `sold` ticket holders shows up independently with probability `show_rate` (measured:
1 - no-shows / sold over departed flights, flights.overbooking).  Boarding is denied when more
show up than there are seats: P(denied) = P(X > capacity), X ~ Binomial(sold, show_rate).
Selling `capacity + limit` units, the suggested `limit` is the largest one that keeps that
risk at or below the staff's target.  The tail is summed term by term in log space
(`math.lgamma`), which stays exact enough for any cabin size and never overflows.
"""

from __future__ import annotations

import math

# The suggestion never goes past this many units over capacity, whatever the data say (a
# route measured with nearly everyone missing is a data problem, not a licence to oversell).
MAX_OVERBOOK_SHARE = 0.25
# A risk equal to the target is allowed; this absorbs the last bits of floating-point error.
ROUNDING = 1e-12


def binomial_pmf(k: int, n: int, p: float) -> float:
    """P(X = k) for X ~ Binomial(n, p)."""
    if k < 0 or k > n:
        return 0.0
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if p >= 1.0:
        return 1.0 if k == n else 0.0
    log_choose = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log_choose + k * math.log(p) + (n - k) * math.log1p(-p))


def binomial_upper_tail(threshold: int, n: int, p: float) -> float:
    """P(X > threshold) for X ~ Binomial(n, p)."""
    if threshold >= n:
        return 0.0
    start = max(threshold + 1, 0)
    return min(1.0, sum(binomial_pmf(k, n, p) for k in range(start, n + 1)))


def denied_boarding_risk(*, capacity: int, sold: int, show_rate: float) -> float:
    """The probability that more than `capacity` of `sold` ticket holders show up."""
    return binomial_upper_tail(capacity, sold, show_rate)


def expected_denied(*, capacity: int, sold: int, show_rate: float) -> float:
    """E[max(X - capacity, 0)]: the passengers denied boarding on average."""
    return sum(
        (k - capacity) * binomial_pmf(k, sold, show_rate) for k in range(capacity + 1, sold + 1)
    )


def suggest_overbook_limit(
    *, capacity: int, show_rate: float, target_risk: float, max_limit: int | None = None
) -> int:
    """The largest limit L (0 <= L <= `max_limit`, by default MAX_OVERBOOK_SHARE x capacity)
    such that selling `capacity + L` keeps P(any denied boarding) <= `target_risk`.

    The risk grows with every unit sold, so the search stops at the first L that breaks the
    target."""
    if not 0.0 <= show_rate <= 1.0:
        raise ValueError("show_rate is a probability")
    if not 0.0 <= target_risk < 1.0:
        raise ValueError("target_risk is a probability below 1")
    ceiling = math.floor(capacity * MAX_OVERBOOK_SHARE) if max_limit is None else max_limit
    limit = 0
    while limit < ceiling:
        risk = denied_boarding_risk(
            capacity=capacity, sold=capacity + limit + 1, show_rate=show_rate
        )
        if risk > target_risk + ROUNDING:
            break
        limit += 1
    return limit
