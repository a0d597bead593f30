"""One rule, one place, for the two catalogue rules the seatless hold's function asks in SQL
(migration bookings 0026): whether the sale is open (flights.rules.is_bookable,
events.rules.is_open) and whether the class is sold without seats (every cabin of a flight, a
standing area of an event).  The Python rules stay the definition; the function's copies
must refuse and accept exactly as they do.

A hypothesis property draws a sale state (a flight: status, departure a few minutes around
now, gate closed or not; an event: status, on-sale and start times around now) and a sequence
of holds (a class sold without seats, a seated one or none at all; one to three passengers)
with time passing a minute or more (the boundaries `departure == now`, `on_sale_at == now`,
`starts_at == now` are crossed on the minute), plays it once through the function and once
through the Python path, and compares every answer (the booking, or the exception's type and
message) and every row.  The controls move the SQL copy's boundary by one (`>=` for `>`) or
let an event's seated category be sold by count, and show the property fails.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bookings.customer_holds import hold_seatless
from bookings.models import Booking, Inventory
from events.models import Event, EventStatus
from flights.models import Flight, FlightStatus
from kernel.errors import DomainError
from tests.bookings.test_one_statement_hold import (
    CAP,
    REAL_NOW,
    _booking_row,
    _passengers_of,
    _rows,
    _seatkeeper,
    customers,
)
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db

minutes = st.integers(-3, 3)
flight_state = st.tuples(
    st.just("flight"),
    st.sampled_from(FlightStatus.values),
    minutes,  # departure, minutes from the start
    st.booleans(),  # gate closed
)
# on_sale_at < starts_at (a constraint): the start is 1 to 4 minutes after the opening.
# A draft has no sale (a constraint): every other status.
event_state = st.tuples(
    st.just("event"),
    st.sampled_from([s for s in EventStatus.values if s != EventStatus.DRAFT]),
    minutes,
    st.integers(1, 4),
)
hold = st.tuples(
    st.just("hold"),
    st.sampled_from([0, 0, 1, 2]),
    st.sampled_from(["seatless", "seatless", "seated", "missing"]),
    st.integers(1, 3),
)
steps = st.lists(
    st.one_of(hold, hold, st.tuples(st.just("wait"), st.integers(1, 2))), min_size=1, max_size=8
)
# Per item: the class codes the roles name (an event's standing area is "GA-<section>").
FLIGHT_CLASSES = {"seatless": "ECONOMY", "seated": "BUSINESS", "missing": "FIRST"}


def fresh_sale(state, start) -> tuple[int, dict[str, str], dict[str, str]]:
    """A sale in `state`; the codes of its roles, and the names that differ between two runs
    (a flight's code and sale id, a standing area's code) with what they are compared as."""
    if state[0] == "flight":
        _, status, departs, gate_closed = state
        flight = FlightFactory(departure_at=start + timedelta(days=2))
        Flight.objects.filter(pk=flight.pk).update(
            status=status,
            departure_at=start + timedelta(minutes=departs),
            gate_closed_at=start - timedelta(hours=1) if gate_closed else None,
        )
        return (
            flight.sale_id,
            FLIGHT_CLASSES,
            {flight.code: "<flight>", str(flight.sale_id): "<sale>"},
        )
    _, status, opens, lasts = state
    event = EventFactory(name="Property concert")
    Event.objects.filter(pk=event.pk).update(
        status=status,
        on_sale_at=start + timedelta(minutes=opens),
        starts_at=start + timedelta(minutes=opens + lasts),
    )
    codes = list(
        Inventory.objects.filter(sale_id=event.sale_id).values_list("fare_class", flat=True)
    )
    standing = next(c for c in codes if c.startswith("GA-"))
    roles = {"seatless": standing, "seated": "A", "missing": "NOPE"}
    return event.sale_id, roles, {standing: "<standing>"}


def run(state, ops, *, one_statement: bool, people, start, monkeypatch):
    clock = [start]
    monkeypatch.setattr(timezone, "now", lambda: clock[0])
    sale_id, roles, names = fresh_sale(state, start)
    answers: list = []
    made: list[Booking] = []
    with override_settings(
        SEATKEEPER={
            **_seatkeeper(),
            "HOLD_IN_ONE_STATEMENT": one_statement,
            "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": CAP,
        }
    ):
        for op in ops:
            if op[0] == "wait":
                clock[0] += timedelta(minutes=op[1])
                answers.append(("waited",))
                continue
            _, who, role, party = op
            try:
                booking = hold_seatless(
                    customer=people[who], sale_id=sale_id, fare_class=roles[role], passengers=party
                )
            except DomainError as exc:
                answers.append((type(exc).__name__, str(exc)))
            else:
                made.append(booking)
                answers.append(("held", _booking_row(booking, made), _passengers_of(booking)))
    return _as_compared((answers, _rows(sale_id, people)), names)


def _as_compared(value, names: dict[str, str]):
    if isinstance(value, str):
        for name, role in names.items():
            value = value.replace(name, role)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_as_compared(v, names) for v in value)
    if isinstance(value, dict):
        return {k: _as_compared(v, names) for k, v in value.items()}
    return value


def assert_same(state, ops, *, people, monkeypatch) -> list:
    start = REAL_NOW().replace(second=0, microsecond=0)
    one = run(state, ops, one_statement=True, people=people, start=start, monkeypatch=monkeypatch)
    python = run(
        state, ops, one_statement=False, people=people, start=start, monkeypatch=monkeypatch
    )
    assert one[0] == python[0], (state, ops)
    assert one[1] == python[1], (state, ops)
    return one[0]


@pytest.fixture
def people():
    return customers()


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(state=st.one_of(flight_state, event_state), ops=steps)
def test_the_sql_rules_and_the_python_rules_refuse_and_accept_alike(
    state, ops, people, monkeypatch
):
    assert connection.vendor == "postgresql"
    assert_same(state, ops, people=people, monkeypatch=monkeypatch)


# Fixed sequences: each rule's boundary, both ways, on each catalogue.
ON_THE_MINUTE = [("hold", 0, "seatless", 1), ("wait", 1), ("hold", 1, "seatless", 1)]
CASES = [
    # departure one minute away: open, then departure == now: closed
    (("flight", "SCHEDULED", 1, False), ON_THE_MINUTE, ["held", "waited", "SaleClosed"]),
    (("flight", "SCHEDULED", 5, True), ON_THE_MINUTE[:1], ["SaleClosed"]),  # gate closed
    (("flight", "CANCELLED", 5, False), ON_THE_MINUTE[:1], ["SaleClosed"]),
    # opens in a minute: closed, then on_sale_at == now: open
    (("event", "ON_SALE", 1, 3), ON_THE_MINUTE, ["SaleClosed", "waited", "held"]),
    # starts in a minute: open, then starts_at == now: closed
    (("event", "ON_SALE", -2, 3), ON_THE_MINUTE, ["held", "waited", "SaleClosed"]),
    (("event", "FINISHED", -2, 3), ON_THE_MINUTE[:1], ["SaleClosed"]),
    (("event", "ON_SALE", -2, 3), [("hold", 0, "seated", 1)], ["SeatsRequired"]),
    # the order of refusals: closed before seats required, missing before closed
    (("event", "CANCELLED", -2, 3), [("hold", 0, "seated", 1)], ["SaleClosed"]),
    (("event", "CANCELLED", -2, 3), [("hold", 0, "missing", 1)], ["FareClassNotFound"]),
    (("flight", "SCHEDULED", 5, False), [("hold", 0, "seated", 2)], ["held"]),
]


@pytest.mark.parametrize(("state", "ops", "kinds"), CASES)
def test_each_boundary_is_reached_and_answered_alike(state, ops, kinds, people, monkeypatch):
    answers = assert_same(state, ops, people=people, monkeypatch=monkeypatch)
    assert [a[0] for a in answers] == kinds, answers


def _function_with(right: str, wrong: str) -> None:
    """Replace the function (inside this test's transaction: rolled back after it)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_functiondef('seatkeeper_hold_units'::regproc)")
        source = cursor.fetchone()[0]
        assert right in source
        cursor.execute(source.replace(right, wrong))


def test_control_the_property_catches_an_sql_boundary_off_by_one(people, monkeypatch):
    _function_with("f.departure_at > p_now", "f.departure_at >= p_now")
    with pytest.raises(AssertionError):
        assert_same(*CASES[0][:2], people=people, monkeypatch=monkeypatch)

    # And hypothesis finds such a sale and sequence by itself.
    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(state=st.one_of(flight_state, event_state), ops=steps)
    def property_(state, ops):
        assert_same(state, ops, people=people, monkeypatch=monkeypatch)

    with pytest.raises(AssertionError):
        property_()


def test_control_the_property_catches_a_seated_category_sold_by_count(people, monkeypatch):
    _function_with("left(p_fare_class, 3) <> 'GA-'", "false")
    with pytest.raises(AssertionError):
        assert_same(*CASES[6][:2], people=people, monkeypatch=monkeypatch)
