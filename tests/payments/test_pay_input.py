"""One rule, one place: a pay request read by the quick path (payments.pay_input) is what
`PayRequestSerializer` makes of it: the same validated data, or, for any body the quick path
does not take, the serializer's own error.

A property-based test sends random bodies, valid and invalid (payment methods blank, padded,
with NUL or a lone surrogate, of 100 and 101 characters, numbers, booleans, lists; amounts and
currencies good and bad; unknown keys; not a dict at all), to both.  Its controls are quick
paths wrong in one detail, which the property must catch; and the body the benches send takes
the quick path.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from payments import pay_input
from payments.pay_input import PayRequestSerializer
from tests import quick_input_checks as checks

methods = st.one_of(
    st.sampled_from(["4242424242424242", "4000000000000002", "pm_card_visa", "", " ", "\t"]),
    st.sampled_from([" 4242", "4242 ", "42\x0042", "Bo\ud800", "x" * 100, "x" * 101, "Zoë"]),
    st.sampled_from([4242, 42.5, True, False, None, [], ["4242"], {}]),
    st.text(max_size=110),
)
amounts = st.one_of(
    st.sampled_from(["120.00", "0", "-1", "1e3", "abc", "12.345", "1" * 13, 120, 12.5, None]),
    st.decimals(allow_nan=True, places=3),
)
currencies = st.one_of(st.sampled_from(["EUR", "eur", "EURO", "E1R", "", 978, None]), st.text())
bodies = st.one_of(
    st.fixed_dictionaries({"payment_method": methods}),
    st.fixed_dictionaries(
        {},
        optional={
            "payment_method": methods,
            "amount": amounts,
            "currency": currencies,
            "unknown_key": st.integers(),
        },
    ),
    st.lists(st.integers(), max_size=2),
    st.none(),
    st.text(max_size=5),
)


def serializers_answer(body):
    return checks.serializers_answer(PayRequestSerializer, body)


def check(body) -> bool:
    """The quick path's answer is the serializer's; whether the quick path took the body."""
    return checks.quick_path_agrees(pay_input, "pay_request", PayRequestSerializer, body)


# Edges every run tries first (hypothesis' explicit examples), besides the random bodies.
EDGES = [
    {"payment_method": "x" * 101},
    {"payment_method": " 4242"},
    {"payment_method": "42\x0042"},
    {"payment_method": "Bo\ud800"},
    {"payment_method": 4242},
    {"payment_method": True},
    {"payment_method": "4242", "amount": "-1"},
    {"payment_method": "4242", "unknown_key": 1},
]


def with_edges(test):
    for body in EDGES:
        test = example(body=body)(test)
    return test


PROPERTY = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(body=bodies)
@with_edges
def test_the_quick_path_reads_a_body_as_the_serializer_does(body):
    check(body)


@pytest.mark.parametrize(
    "body",
    [{"payment_method": "4242424242424242"}, {"payment_method": "pm_card_visa"}, {}],
)
def test_the_usual_bodies_take_the_quick_path(body):
    assert check(body)


# --- controls: quick paths wrong in one detail, each caught --------------------------------


def _not_checking_length(data):
    if type(data) is dict and type(data.get("payment_method")) is str:
        return REAL_QUICK({"payment_method": data["payment_method"][:100]}) and dict(data)
    return REAL_QUICK(data)


def _not_stripping(data):
    if type(data) is dict and type(data.get("payment_method")) is str:
        return REAL_QUICK({"payment_method": data["payment_method"].strip()}) and dict(data)
    return REAL_QUICK(data)


def _numbers_as_strings(data):
    if type(data) is dict and type(data.get("payment_method")) in (int, float, bool):
        return {"payment_method": str(data["payment_method"])}
    return REAL_QUICK(data)


def _ignoring_other_keys(data):
    if type(data) is dict and "payment_method" in data:
        return REAL_QUICK({"payment_method": data["payment_method"]})
    return REAL_QUICK(data)


REAL_QUICK = pay_input._quick


@pytest.mark.parametrize(
    "wrong", [_not_checking_length, _not_stripping, _numbers_as_strings, _ignoring_other_keys]
)
def test_control_a_quick_path_wrong_in_one_detail_is_caught(monkeypatch, wrong):
    monkeypatch.setattr(pay_input, "_quick", wrong)

    @settings(PROPERTY, phases=[Phase.explicit, Phase.generate])  # found is enough: no shrinking
    @given(body=bodies)
    @with_edges
    def property_with_the_wrong_quick_path(body):
        check(body)

    with pytest.raises(AssertionError):
        property_with_the_wrong_quick_path()
