"""One rule, one place: a fresh hold's 201 built directly (storefront.hold_answer) is the body
`BookingDetailSerializer` gives for it, key for key, in the same order and to the byte once
rendered.

A property-based test builds random holds as the hold paths leave them (the booking with its
written passengers and its sale read with the catalogue item, not saved): on a flight or at
an event; seated, seatless or both; named, blank or unnamed passengers; exit rows confirmed
or not, wherever the flight's exit rows are; booking classes, amounts (also with more or
fewer than two decimal places), currencies, times in any zone and any current time zone; ids
in any order.  Its controls are builders each wrong in one detail, which the property must
catch.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bookings import catalogue, selectors
from bookings.holding import held_booking, held_passengers
from bookings.models import Sale, Seat
from kernel.web.renderers import CamelJSONRenderer
from storefront import hold_answer
from storefront.booking_serializers import BookingDetailSerializer
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db

NAMES = ["", " ", "Ana Lima", "Bo Chen", "  Zoë Ångström ", "李雷", "O'Brien-Smith"]
LETTERS = "ABCDEF"

holds = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["flight", "event"]),
        "fare_class": st.sampled_from(["ECONOMY", "BUSINESS", "A", "B", "GA-3"]),
        "booking_class": st.sampled_from(["", "", "LAUNCH", "SAVER"]),
        "units": st.integers(1, 6),
        "seated": st.integers(0, 6),  # at most `units` of them
        # Rows near the exit rows, so exit-row seats (confirmed or not) come up often.
        "rows": st.lists(st.sampled_from([3, 11, 12, 13, 14, 31]), min_size=6, max_size=6),
        "letters": st.permutations(LETTERS),
        "names": st.lists(st.sampled_from(NAMES) | st.text(max_size=8), max_size=6),
        "confirmed": st.booleans(),
        "exit_rows": st.lists(st.sampled_from([11, 12, 13, 14]), max_size=3, unique=True),
        "amount": st.decimals(
            min_value=0, max_value=Decimal("99999999.99"), places=2, allow_nan=False
        )
        | st.decimals(min_value=0, max_value=Decimal("9999999"), places=0)
        | st.decimals(min_value=0, max_value=Decimal("999999"), places=4),
        "currency": st.sampled_from(["EUR", "USD", "VND", "JPY"]),
        "now": st.datetimes(
            min_value=datetime(2000, 1, 1), max_value=datetime(2090, 1, 1), timezones=st.timezones()
        ),
        "ttl_seconds": st.integers(0, 10 * 24 * 3600),
        "current_zone": st.sampled_from(
            ["UTC", "Europe/Berlin", "Asia/Ho_Chi_Minh", "America/St_Johns"]
        ),
        "booking_id": st.integers(1, 2**62),
        "customer_id": st.integers(1, 2**62),
        "passenger_ids": st.lists(st.integers(1, 2**62), min_size=6, max_size=6, unique=True),
    }
)


ONE_HOLD = {
    "kind": "flight",
    "fare_class": "ECONOMY",
    "booking_class": "",
    "units": 2,
    "seated": 2,
    "rows": [12, 12, 3, 4, 5, 6],
    "letters": list(LETTERS),
    "names": ["Ana Lima"],
    "confirmed": False,
    "exit_rows": [12, 13],
    "amount": Decimal("200.00"),
    "currency": "EUR",
    "now": datetime(2026, 12, 6, 3, 0, tzinfo=UTC),
    "ttl_seconds": 600,
    "current_zone": "UTC",
    "booking_id": 7,
    "customer_id": 42,
    "passenger_ids": [11, 10, 12, 13, 14, 15],
}


@pytest.fixture
def sales() -> dict[str, int]:
    return {"flight": FlightFactory().sale_id, "event": EventFactory().sale_id}


def fresh_hold(spec: dict, sale_id: int):
    """A booking as a hold path leaves it: written passengers, the sale with its item."""
    sale = Sale.objects.select_related(*catalogue.owner_paths()).get(pk=sale_id)
    if spec["kind"] == "flight":
        sale.flight.exit_rows = spec["exit_rows"]
    now = spec["now"]
    booking = held_booking(
        customer_id=spec["customer_id"],
        sale_id=sale_id,
        fare_class=spec["fare_class"],
        units=spec["units"],
        booking_class=spec["booking_class"],
        amount=spec["amount"],
        currency=spec["currency"],
        expires_at=now + timedelta(seconds=spec["ttl_seconds"]),
        now=now,
    )
    booking.pk = spec["booking_id"]
    booking._state.adding = False
    booking.sale = sale
    seats = [
        Seat(pk=n + 1, sale_id=sale_id, seat_no=f"{row}{letter}")
        for n, (row, letter) in enumerate(zip(spec["rows"], spec["letters"], strict=True))
    ][: min(spec["seated"], spec["units"])]
    passengers = held_passengers(
        booking,
        seats=seats,
        names=spec["names"][: spec["units"]],
        now=now,
        conditions_confirmed=spec["confirmed"],
    )
    for passenger, pk in zip(passengers, spec["passenger_ids"], strict=False):
        passenger.pk = pk
    booking.written_passengers = passengers  # in write order, which need not be id order
    return booking


def check(spec: dict, sales: dict[str, int]) -> None:
    with timezone.override(spec["current_zone"]):
        built = hold_answer.fresh_hold_answer(fresh_hold(spec, sales[spec["kind"]]))
        booking = selectors.booking_just_written(booking=fresh_hold(spec, sales[spec["kind"]]))
        serialized = BookingDetailSerializer(booking, context={"no_payments_yet": True}).data
    assert built is not None
    assert list(built.items()) == list(serialized.items())
    renderer = CamelJSONRenderer()
    assert renderer.render(built) == renderer.render(serialized)


PROPERTY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPERTY
@given(spec=holds)
def test_the_built_answer_is_the_serializers(sales, spec):
    check(spec, sales)


def test_a_booking_not_left_by_a_hold_is_serialised_instead(sales):
    booking = fresh_hold(ONE_HOLD, sales["flight"])
    assert hold_answer.fresh_hold_answer(booking) is not None
    del booking.written_passengers
    assert hold_answer.fresh_hold_answer(booking) is None


# --- controls: builders wrong in one detail, each caught -----------------------------------


def _no_utc_z(value):
    return value.astimezone(timezone.get_current_timezone()).isoformat()


def _positions_from_zero(seated):
    return [{**u, "position": u["position"] - 1} for u in REAL_UNNAMED(seated)]


def _exit_rows_ignoring_confirmation(booking, passengers):
    for p in passengers:
        p.seat_conditions_confirmed_at = None
    return REAL_UNCONFIRMED(booking, passengers)


def _sorted_keys(booking):
    found = REAL_BUILD(booking)
    return None if found is None else dict(sorted(found.items()))


REAL_UNNAMED = hold_answer._unnamed
REAL_UNCONFIRMED = hold_answer._unconfirmed_exit_rows
REAL_BUILD = hold_answer.fresh_hold_answer


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("_when", _no_utc_z),
        ("_amount", lambda value: str(value)),
        ("_unnamed", _positions_from_zero),
        ("_unconfirmed_exit_rows", _exit_rows_ignoring_confirmation),
        ("fresh_hold_answer", _sorted_keys),
    ],
)
def test_control_a_builder_wrong_in_one_detail_is_caught(sales, monkeypatch, name, wrong):
    monkeypatch.setattr(hold_answer, name, wrong)

    @settings(PROPERTY, phases=[Phase.generate])  # found is enough: no shrinking
    @given(spec=holds)
    def property_with_the_wrong_builder(spec):
        check(spec, sales)

    with pytest.raises(AssertionError):
        property_with_the_wrong_builder()


# The booking URLs' templates: tests/kernel/test_id_urls.py (kernel.web.id_urls).
