"""The Redis hold filters (flights/availability.py): cheap refusals, never a decision.

Every refusal a filter gives must be one PostgreSQL would give too, and every refusal must stop
once the filter is corrected; each test that shows a cheap refusal has a control with the
filter off showing the same request really goes to the database.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bookings import availability
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SeatNotFound, SeatUnavailable, SoldOut
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking
from flights.models import FareInventory
from flights.services import block_seat, check_inventory, set_fare_limits, unblock_seat
from flights.tasks import rebuild_hold_counters
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


@pytest.fixture
def filters(settings, redis_backend):
    """Switch the filters (against this test run's Redis db, or the test Redis Cluster:
    every test here runs on both); returns the switch."""
    home = settings.HOLD_FILTERS["REDIS_URL"] if redis_backend == "cluster" else None

    def switch(*, gate: bool = True, counter: bool = True, trust: float = 5, url=None) -> None:
        settings.HOLD_FILTERS = {
            **settings.HOLD_FILTERS,
            "REDIS_URL": url or home or settings.REDIS_URL,
            "SEAT_GATE": gate,
            "AVAILABILITY_COUNTER": counter,
            "COUNTER_TRUST_SECONDS": trust,
        }
        availability._down_until = 0.0

    if not settings.REDIS_URL:
        pytest.fail("the hold filter tests need REDIS_URL (./scripts/test sets it)")
    switch()
    yield switch
    availability._down_until = 0.0


def small_flight():
    return FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=2))  # 6 seats + 2


def left(flight) -> int | None:
    return availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY")


def db_left(flight) -> int:
    return FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").available


def statements(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries]


def reaches_the_reserve(sql: str) -> bool:
    return sql.startswith("UPDATE") or "seatkeeper_hold_units(" in sql


def hold(customer, flight, *seats):
    return hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=list(seats)
    )


# --- the seat gate -----------------------------------------------------------------------------


def test_a_seat_being_held_is_refused_by_the_gate_without_any_query(filters, customer):
    flight = FlightFactory()
    hold(customer, flight, "12A")
    rival = UserFactory()
    with CaptureQueriesContext(connection) as captured, pytest.raises(SeatUnavailable) as exc:
        hold(rival, flight, "12B", "12A")
    assert exc.value.extra["seats"] == ["12A"]
    assert statements(captured) == []
    # all or none: the loser gated nothing, so 12B is free for the next customer
    hold(UserFactory(), flight, "12B")


def test_control_without_the_gate_the_loser_goes_to_the_database(filters, customer):
    filters(gate=False)
    flight = FlightFactory()
    hold(customer, flight, "12A")
    rival = UserFactory()
    with CaptureQueriesContext(connection) as captured, pytest.raises(SeatUnavailable):
        hold(rival, flight, "12A")
    assert any("FOR UPDATE" in sql for sql in statements(captured))


def test_gate_is_released_when_the_hold_fails(filters, customer):
    flight = FlightFactory()
    with pytest.raises(SeatNotFound):
        hold(customer, flight, "12A", "40A")  # 40A does not exist: nothing is held
    hold(UserFactory(), flight, "12A")


@pytest.mark.parametrize("ending", ["cancel", "expire"])
def test_gate_opens_when_the_hold_ends(filters, customer, ending):
    flight = FlightFactory()
    booking = hold(customer, flight, "12A")
    if ending == "cancel":
        cancel_hold(customer=customer, booking_id=booking.pk)
    else:
        Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now())
        assert expire_holds() == 1
    hold(UserFactory(), flight, "12A")  # within the gate's TTL: the release opened it


def test_gate_never_outlives_the_hold_ttl(filters, settings, customer):
    settings.SEATKEEPER = {**settings.SEATKEEPER, "HOLD_TTL": timedelta(seconds=1)}
    flight = FlightFactory()
    hold(customer, flight, "12A")
    ttl_ms = availability._client().pttl(availability.gate_key(flight.pk, "12A"))
    assert 0 < ttl_ms <= 1000


def test_a_stale_gate_expires_and_postgresql_decides(filters, settings, customer):
    settings.HOLD_FILTERS = {**settings.HOLD_FILTERS, "SEAT_GATE_SECONDS": 0.3}
    flight = FlightFactory()
    # A gate left behind by a crashed worker: nothing in PostgreSQL holds the seat.
    availability._client().set(availability.gate_key(flight.pk, "12A"), "crashed", px=300)
    with pytest.raises(SeatUnavailable):
        hold(customer, flight, "12A")
    import time

    time.sleep(0.35)
    hold(customer, flight, "12A")


# --- the availability counter --------------------------------------------------------------------


def test_new_flight_seeds_its_counters_without_a_query(filters):
    flight = small_flight()
    assert left(flight) == 8


def test_sold_out_fare_class_is_refused_from_redis_without_a_transaction(filters, customer):
    flight = small_flight()
    for _ in range(4):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2)
    assert left(flight) == 0 == db_left(flight)
    with CaptureQueriesContext(connection) as captured, pytest.raises(SoldOut):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert statements(captured) == []
    with CaptureQueriesContext(connection) as captured, pytest.raises(SoldOut):
        hold(customer, flight, "1A")  # seat holds are refused before any query at all
    assert statements(captured) == []


def test_control_without_the_counter_the_sold_out_loser_opens_a_transaction(filters, customer):
    filters(counter=False)
    flight = small_flight()
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=8)
    with CaptureQueriesContext(connection) as captured, pytest.raises(SoldOut):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    # The reserve: the fare row's UPDATE, or on PostgreSQL the one-statement hold that ends in it.
    assert any(reaches_the_reserve(sql) for sql in statements(captured))


def test_counter_is_given_back_when_the_database_refuses(filters, customer):
    filters(gate=False)
    flight = small_flight()
    hold(customer, flight, "1A")
    with pytest.raises(SeatUnavailable):  # PostgreSQL refuses: the seat is held
        hold(UserFactory(), flight, "1A")
    with pytest.raises(SeatNotFound):
        hold(UserFactory(), flight, "1B", "9A")  # no row 9: refused inside
    assert left(flight) == 7 == db_left(flight)


@pytest.mark.parametrize("ending", ["cancel", "expire"])
def test_counter_gets_units_back_when_a_hold_ends(filters, customer, ending):
    flight = small_flight()
    booking = hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=8
    )
    assert left(flight) == 0
    if ending == "cancel":
        cancel_hold(customer=customer, booking_id=booking.pk)
    else:
        Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now())
        expire_holds()
    assert left(flight) == 8 == db_left(flight)
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=8)


def test_staff_limit_changes_and_unblocking_correct_the_counter(filters, customer, other_customer):
    flight = small_flight()
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=8)
    inv = FareInventory.objects.get(sale=flight.sale)
    set_fare_limits(inventory_id=inv.pk, capacity=6, overbook_limit=4, price=inv.price)
    assert left(flight) == 2 == db_left(flight)
    # Another customer: one may hold at most 9 units of a flight at a time.
    hold_seatless(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
    )
    set_fare_limits(inventory_id=inv.pk, capacity=7, overbook_limit=4, price=inv.price)
    assert left(flight) == 1
    assert block_seat(sale_id=flight.sale_id, seat_no="1A") is True
    assert unblock_seat(sale_id=flight.sale_id, seat_no="1A") is True
    hold_seatless(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
    )
    assert check_inventory(sale_id=flight.sale_id) == []


def test_missing_counter_is_rebuilt_from_postgresql(filters, customer):
    flight = small_flight()
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=3)
    availability._client().delete(availability.counter_key(flight.pk, "ECONOMY"))
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert left(flight) == 4 == db_left(flight)


def test_counter_wrongly_at_zero_is_checked_with_postgresql_once_older_than_trusted(
    filters, customer
):
    filters(trust=0.2)
    flight = small_flight()
    availability.seed_counter(sale_id=flight.sale_id, fare_class="ECONOMY", available=0)
    with pytest.raises(SoldOut):  # fresh: trusted (this is the documented window)
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    import time

    time.sleep(0.25)
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert left(flight) == 7 == db_left(flight)


def test_beat_rebuild_corrects_a_counter_wrongly_at_zero(filters, customer):
    flight = small_flight()
    availability.seed_counter(sale_id=flight.sale_id, fare_class="ECONOMY", available=0)
    with pytest.raises(SoldOut):
        hold(customer, flight, "1A")
    assert rebuild_hold_counters() >= 1
    assert left(flight) == 8
    hold(customer, flight, "1A")


def test_counter_too_high_never_sells_more_than_postgresql(filters, customer):
    flight = small_flight()
    availability.seed_counter(sale_id=flight.sale_id, fare_class="ECONOMY", available=100)
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=8)
    with pytest.raises(SoldOut):  # PostgreSQL refuses, and the counter is corrected at once
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert left(flight) == 0 == db_left(flight)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_with_the_filters_redis_unreachable_holds_work_as_without_them(filters, customer):
    filters(url="redis://127.0.0.1:1/0")  # nothing listens on port 1
    flight = small_flight()
    hold(customer, flight, "1A")
    with pytest.raises(SeatUnavailable):
        hold(UserFactory(), flight, "1A")
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=7)
    with pytest.raises(SoldOut):
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_short_counter_with_a_hold_still_running_lets_the_request_through(filters, customer):
    flight = small_flight()
    key = availability.counter_key(flight.pk, "ECONOMY")
    # Another worker took the last units and is still in its transaction: it may yet fail.
    availability._client().hset(key, mapping={"n": 0, "pending": 8})
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert left(flight) == 0  # the untracked win brought n down (floored at 0)
    availability._client().hset(key, mapping={"pending": 0})
    with pytest.raises(SoldOut):  # nothing pending any more: the counter's 0 is believed
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
