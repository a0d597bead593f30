"""One rule, one place: a hold request read by the quick path (storefront.hold_input) is what
`BookingCreateSerializer` makes of it: the same validated data, keys in the same order, or,
for any body the quick path does not take, the serializer's own error.

A property-based test sends random bodies, valid and invalid (ids of every type and range,
class codes in and out of their pattern, seats and names with blanks, padding, NUL, too long,
lists too long, unknown keys, flights and events, both or neither, seats and passengers), to
both.  Its controls are quick paths wrong in one detail, which the property must catch; and
the body the benches send takes the quick path.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from storefront import hold_input
from storefront.booking_serializers import BookingCreateSerializer
from tests import quick_input_checks as checks

ids = st.one_of(
    st.integers(1, 10**6),
    st.integers(-3, 3),
    st.sampled_from([2**63 - 1, 2**63, 10**30]),
    st.booleans(),
    st.none(),
    st.sampled_from(["12", " 7", "x", "1.0"]),
    st.floats(allow_nan=True),
)
codes = st.one_of(
    st.sampled_from(["ECONOMY", "BUSINESS", "FIRST", "A", "B", "GA-3", "ga-3", "LAUNCH"]),
    st.sampled_from(["", " A", "A ", "A\n", "VIP 1", "ÉCO", "ECONOMYPLUS", "A\x00", 7, None]),
    st.from_regex(r"[A-Za-z0-9-]{1,12}", fullmatch=True),
    st.text(max_size=12),
)
seat_nos = st.one_of(
    st.sampled_from(["12A", "12B", "1C", "B-12-7", "", " 12A", "12A ", "12\x00A", "Ä1", "\n"]),
    st.sampled_from(["1234567890ABCDEF", "1234567890ABCDEFG"]),  # 16 and 17 characters
    st.text(max_size=18),
)
names = st.one_of(
    st.sampled_from(["Ana Lima", "", " ", " Bo", "Zoë", "李雷", "a\x00b"]),
    st.sampled_from(["x" * 120, "x" * 121]),
    st.sampled_from(["Ana\x00Lima", "Bo\ud800"]),  # NUL, a lone surrogate
    st.text(max_size=130),
)
units = st.one_of(st.integers(-1, 52), st.booleans(), st.none(), st.sampled_from(["2", 2.0]))
values = {
    "flight_id": ids,
    "event_id": ids,
    "customer_id": ids,
    "fare_class": codes,
    "category": codes,
    "booking_class": codes,
    "seats": st.one_of(st.lists(seat_nos, max_size=52), seat_nos, st.none()),
    "passengers": units,
    "passenger_names": st.one_of(st.lists(names, max_size=52), names, st.none()),
    "exit_row_confirmed": st.one_of(st.booleans(), st.sampled_from([0, 1, "true", None])),
    "unknown_key": st.integers(),
}
# Mostly the keys a client sends, so that valid bodies (the quick path's) come up often.
bodies = st.one_of(
    st.fixed_dictionaries(
        {
            "flight_id": st.integers(1, 10**6),
            "fare_class": st.sampled_from(["ECONOMY", "BUSINESS"]) | codes,
        },
        optional={
            "passengers": st.integers(1, 50) | st.booleans() | units,
            "passenger_names": st.lists(names, max_size=3) | values["passenger_names"],
            "booking_class": codes,
        },
    ),
    st.fixed_dictionaries(
        {
            "event_id": st.integers(1, 10**6),
            "category": st.sampled_from(["A", "ga-3"]) | codes,
            "seats": st.lists(seat_nos, min_size=1, max_size=4) | values["seats"],
        },
        optional={k: values[k] for k in ("passenger_names", "exit_row_confirmed")},
    ),
    st.fixed_dictionaries({}, optional=values),
    st.lists(st.integers(), max_size=2),
    st.none(),
)


def serializers_answer(body):
    return checks.serializers_answer(BookingCreateSerializer, body)


def check(body) -> bool:
    """The quick path's answer is the serializer's; whether the quick path took the body."""
    return checks.quick_path_agrees(hold_input, "hold_request", BookingCreateSerializer, body)


# Edges every run tries first (hypothesis' explicit examples), besides the random bodies.
FLIGHT = {"flight_id": 1001, "fare_class": "ECONOMY"}
EDGES = [
    {**FLIGHT, "passengers": True},
    {**FLIGHT, "passengers": 1, "passenger_names": ["x" * 121]},
    {**FLIGHT, "passengers": 1, "passenger_names": ["Ana\x00Lima"]},
    {**FLIGHT, "seats": ["1234567890ABCDEFG"]},
    {"event_id": 7, "category": "ga-3", "passengers": 1},
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
    [
        {"flight_id": 1001, "fare_class": "ECONOMY", "passengers": 1, "passenger_names": ["B 1"]},
        {"flight_id": 1001, "customer_id": 42, "fare_class": "ECONOMY", "seats": ["12A", "12B"]},
        {"event_id": 7, "category": "ga-3", "passengers": 2, "booking_class": "launch"},
    ],
)
def test_the_usual_bodies_take_the_quick_path(body):
    assert check(body)


# --- controls: quick paths wrong in one detail, each caught --------------------------------


def _not_checking_lengths(value, *, max_length, blank):
    return REAL_STRINGS(value, max_length=10**6, blank=blank)


def _not_checking_printable(value, *, max_length, blank):
    if type(value) is not list or not all(type(v) is str for v in value):
        return None
    return REAL_STRINGS([v.replace("\x00", "") for v in value], max_length=max_length, blank=blank)


def _not_normalising(data):
    body = dict(data) if type(data) is dict else data
    found = REAL_QUICK(data)
    if found is not None and "category" in body:
        found["fare_class"] = body["category"]
    return found


def _bools_as_ints(data):
    if type(data) is dict and type(data.get("passengers")) is bool:
        data = {**data, "passengers": int(data["passengers"])}
    return REAL_QUICK(data)


REAL_STRINGS = hold_input._strings
REAL_QUICK = hold_input._quick


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("_strings", _not_checking_lengths),
        ("_strings", _not_checking_printable),
        ("_quick", _not_normalising),
        ("_quick", _bools_as_ints),
    ],
)
def test_control_a_quick_path_wrong_in_one_detail_is_caught(monkeypatch, name, wrong):
    monkeypatch.setattr(hold_input, name, wrong)

    @settings(PROPERTY, phases=[Phase.explicit, Phase.generate])  # found is enough: no shrinking
    @given(body=bodies)
    @with_edges
    def property_with_the_wrong_quick_path(body):
        check(body)

    with pytest.raises(AssertionError):
        property_with_the_wrong_quick_path()
