"""The Redis hold filters per booking class (docs/fare-classes.md): a loser on a closed launch
fare is refused from its class's own counter without any query, while the fare class and its
dearer classes keep selling; a too-high class counter never oversells; Redis gone, the holds
run exactly as without filters.  Each cheap refusal has its control."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bookings import availability
from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless
from bookings.errors import BookingClassSoldOut
from bookings.inventory import set_booking_class
from bookings.lifecycle import cancel_hold
from bookings.models import BookingClass
from flights.tasks import rebuild_hold_counters
from tests.bookings.test_hold_filters import (
    filters,  # noqa: F401  (the fixture)
    reaches_the_reserve,
)
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def launch_flight():
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=2))  # 6 + 2
    set_booking_class(
        sale_id=flight.sale_id, fare_class="ECONOMY", code="LAUNCH", name="Launch", rank=1,
        auth_limit=2, price=Decimal("19.00"),
    )  # fmt: skip
    return flight


def hold(flight, code="LAUNCH", customer=None, passengers=1):
    return hold_seatless(
        customer=customer or UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY",
        passengers=passengers, booking_class=code,
    )  # fmt: skip


def launch_left(flight):
    return availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY/LAUNCH")


def test_a_closed_launch_fare_is_refused_from_redis_without_a_query(filters):  # noqa: F811
    flight = launch_flight()
    assert launch_left(flight) == 2  # seeded when staff created the class
    hold(flight, passengers=2)
    assert launch_left(flight) == 0
    loser = UserFactory()
    with CaptureQueriesContext(connection) as captured, pytest.raises(BookingClassSoldOut):
        hold(flight, customer=loser)
    assert captured.captured_queries == []
    hold(flight, code="", customer=loser)  # the fare class's own class still sells
    assert check_inventory(sale_id=flight.sale_id) == []


def test_control_without_the_counter_the_launch_loser_opens_a_transaction(filters):  # noqa: F811
    filters(counter=False)
    flight = launch_flight()
    hold(flight, passengers=2)
    with CaptureQueriesContext(connection) as captured, pytest.raises(BookingClassSoldOut):
        hold(flight)
    assert any(reaches_the_reserve(q["sql"]) for q in captured.captured_queries)


def test_units_given_back_reopen_the_class_and_beat_rebuilds_it(filters):  # noqa: F811
    flight = launch_flight()
    customer = UserFactory()
    booking = hold(flight, customer=customer, passengers=2)
    cancel_hold(customer=customer, booking_id=booking.pk)
    assert launch_left(flight) == 2
    availability._client().hset(
        availability.counter_key(flight.sale_id, "ECONOMY/LAUNCH"), mapping={"n": 0}
    )  # drifted low (a lost give-back)
    rebuild_hold_counters()
    assert launch_left(flight) == 2
    hold(flight)


def test_a_too_high_class_counter_never_oversells_and_is_corrected(filters):  # noqa: F811
    flight = launch_flight()
    hold(flight, passengers=2)
    availability._client().hset(
        availability.counter_key(flight.sale_id, "ECONOMY/LAUNCH"), mapping={"n": 5}
    )
    with pytest.raises(BookingClassSoldOut):  # PostgreSQL refuses
        hold(flight)
    assert launch_left(flight) == 0  # and the refusal rebuilt the counter
    assert BookingClass.objects.get(sale_id=flight.sale_id).held == 2


def test_with_redis_unreachable_class_holds_work_as_without_filters(filters):  # noqa: F811
    filters(url="redis://127.0.0.1:1/0")
    flight = launch_flight()
    hold(flight, passengers=2)
    with pytest.raises(BookingClassSoldOut):
        hold(flight)
    hold(flight, code="")
    assert check_inventory(sale_id=flight.sale_id) == []
