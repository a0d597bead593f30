"""The binomial show-up model and the overbook limit it suggests, against values computed by
hand (each written out beside its test)."""

import math

import pytest

from flights.show_up_model import (
    binomial_pmf,
    binomial_upper_tail,
    denied_boarding_risk,
    expected_denied,
    suggest_overbook_limit,
)


def test_pmf_of_small_cases():
    # Binomial(3, 1/2): 1/8, 3/8, 3/8, 1/8
    assert [binomial_pmf(k, 3, 0.5) for k in range(4)] == pytest.approx(
        [0.125, 0.375, 0.375, 0.125]
    )
    # Binomial(4, 0.9) at 4: 0.9^4 = 0.6561; at 3: 4 x 0.9^3 x 0.1 = 0.2916
    assert binomial_pmf(4, 4, 0.9) == pytest.approx(0.6561)
    assert binomial_pmf(3, 4, 0.9) == pytest.approx(0.2916)
    assert binomial_pmf(5, 4, 0.9) == 0 and binomial_pmf(-1, 4, 0.9) == 0


def test_pmf_at_certainty():
    assert binomial_pmf(0, 5, 0.0) == 1 and binomial_pmf(1, 5, 0.0) == 0
    assert binomial_pmf(5, 5, 1.0) == 1 and binomial_pmf(4, 5, 1.0) == 0


def test_the_pmf_sums_to_one_for_a_full_cabin():
    assert sum(binomial_pmf(k, 183, 0.93) for k in range(184)) == pytest.approx(1.0)


def test_upper_tail_by_hand():
    # P(X > 2), X ~ Binomial(3, 1/2) = P(X = 3) = 1/8
    assert binomial_upper_tail(2, 3, 0.5) == pytest.approx(0.125)
    # P(X > 3), X ~ Binomial(5, 0.9) = 5 x 0.9^4 x 0.1 + 0.9^5 = 0.32805 + 0.59049
    assert binomial_upper_tail(3, 5, 0.9) == pytest.approx(0.91854)
    # P(X > 180), X ~ Binomial(183, 0.95): the three top terms, written out
    by_hand = sum(math.comb(183, k) * 0.95**k * 0.05 ** (183 - k) for k in (181, 182, 183))
    assert binomial_upper_tail(180, 183, 0.95) == pytest.approx(by_hand, rel=1e-9)
    assert binomial_upper_tail(5, 5, 0.9) == 0  # nobody beyond the seats can show


def test_denied_boarding_risk_is_zero_without_overbooking():
    assert denied_boarding_risk(capacity=180, sold=180, show_rate=0.99) == 0


def test_expected_denied_by_hand():
    # Binomial(3, 1/2) over 2 seats: one denied with probability 1/8
    assert expected_denied(capacity=2, sold=3, show_rate=0.5) == pytest.approx(0.125)


@pytest.mark.parametrize(
    ("capacity", "show_rate", "target", "limit"),
    [
        # 2 seats, half show: selling 3 risks 1/8 = 12.5 %; selling 4 risks 5/16 = 31.25 %.
        (2, 0.5, 0.05, 0),
        (2, 0.5, 0.125, 1),  # the boundary itself is allowed ("at or below the target")
        (2, 0.5, 0.2, 1),
        (2, 0.5, 0.3125, 2),
        # 8 seats, everyone shows: nothing can be oversold
        (8, 1.0, 0.05, 0),
    ],
)
def test_suggested_limit_by_hand(capacity, show_rate, target, limit):
    assert (
        suggest_overbook_limit(
            capacity=capacity, show_rate=show_rate, target_risk=target, max_limit=10
        )
        == limit
    )


def test_the_suggestion_is_capped_at_a_quarter_of_the_cabin():
    # Nobody shows: no risk at any limit, so the cap decides, not infinity.
    assert suggest_overbook_limit(capacity=8, show_rate=0.0, target_risk=0.05) == 2
    assert suggest_overbook_limit(capacity=2, show_rate=0.0, target_risk=0.05) == 0


def test_the_suggestion_for_a_full_a320_economy_cabin_keeps_the_risk_under_target():
    limit = suggest_overbook_limit(capacity=168, show_rate=0.94, target_risk=0.05)

    assert denied_boarding_risk(capacity=168, sold=168 + limit, show_rate=0.94) <= 0.05
    assert denied_boarding_risk(capacity=168, sold=168 + limit + 1, show_rate=0.94) > 0.05
    assert 0 < limit < 168 * 0.25


def test_a_lower_target_never_suggests_more():
    limits = [
        suggest_overbook_limit(capacity=168, show_rate=0.92, target_risk=t)
        for t in (0.2, 0.1, 0.05, 0.01, 0.0)
    ]
    assert limits == sorted(limits, reverse=True)


@pytest.mark.parametrize(("show_rate", "target"), [(-0.1, 0.05), (1.1, 0.05), (0.9, 1.0)])
def test_probabilities_out_of_range_are_refused(show_rate, target):
    with pytest.raises(ValueError):
        suggest_overbook_limit(capacity=10, show_rate=show_rate, target_risk=target)
