from decimal import Decimal

import pytest
from django.urls import reverse

from bookings.customer_holds import hold_seatless, hold_seats
from flights.demo import HISTORY_DAYS, load_demo
from flights.models import FareInventory, Flight, Seat, SeatStatus
from flights.services import block_seat, check_inventory, set_fare_limits, unblock_seat
from kernel.errors import InvalidRequest
from tests.factories import FlightFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def test_set_fare_limits_refuses_going_below_sold_and_held(customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=4)
    inv = FareInventory.objects.get(sale=flight.sale)
    with pytest.raises(InvalidRequest):
        set_fare_limits(inventory_id=inv.pk, capacity=3, overbook_limit=0, price=Decimal("10"))
    updated = set_fare_limits(
        inventory_id=inv.pk, capacity=4, overbook_limit=2, price=Decimal("120.50")
    )
    assert (updated.capacity, updated.overbook_limit, updated.price, updated.held) == (
        4,
        2,
        Decimal("120.50"),
        4,
    )


def test_admin_inline_edit_never_overwrites_live_counters(client, staff_user, customer, flight):
    inv = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    business = FareInventory.objects.get(sale=flight.sale, fare_class="BUSINESS")
    client.force_login(staff_user)
    url = reverse("admin:flights_flight_change", args=[flight.pk])
    page = client.get(url)
    assert page.status_code == 200 and 'class="admin-seat-map"' in page.text
    # A hold lands after staff opened the form: the stale form must not reset `held` to 0.
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    form = {
        "code": flight.code,
        "origin": flight.origin_id,
        "destination": flight.destination_id,
        "departure_at_0": flight.departure_at.strftime("%Y-%m-%d"),
        "departure_at_1": flight.departure_at.strftime("%H:%M:%S"),
        "arrival_at_0": flight.arrival_at.strftime("%Y-%m-%d"),
        "arrival_at_1": flight.arrival_at.strftime("%H:%M:%S"),
        "status": "SCHEDULED",
        "inventories-TOTAL_FORMS": "2",
        "inventories-INITIAL_FORMS": "2",
        "inventories-MIN_NUM_FORMS": "0",
        "inventories-MAX_NUM_FORMS": "1000",
    }
    for i, row in enumerate([business, inv]):
        form.update(
            {
                f"inventories-{i}-id": row.pk,
                f"inventories-{i}-flight": flight.pk,
                f"inventories-{i}-fare_class": row.fare_class,
                f"inventories-{i}-capacity": row.capacity,
                f"inventories-{i}-overbook_limit": 5 if row == inv else row.overbook_limit,
                f"inventories-{i}-price": row.price,
                f"inventories-{i}-currency": row.currency,
            }
        )
    response = client.post(url, form)
    assert response.status_code == 302, response.content[:2000]
    inv.refresh_from_db()
    assert (inv.overbook_limit, inv.held) == (5, 1)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_admin_refuses_capacity_below_sold_with_a_message(client, staff_user, customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=5)
    inv = FareInventory.objects.get(sale=flight.sale)
    client.force_login(staff_user)
    response = client.post(
        reverse("admin:flights_fareinventory_change", args=[inv.pk]),
        {"capacity": 2, "overbook_limit": 0, "price": "10.00", "currency": "EUR"},
    )
    assert response.status_code == 200
    assert "cannot go below" in response.text
    inv.refresh_from_db()
    assert inv.capacity == 6


def test_admin_lists_bookings_and_inventory(client, staff_user, customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    client.force_login(staff_user)
    listing = client.get(
        reverse("admin:bookings_booking_changelist"),
        {"q": customer.username, "status__exact": "HELD"},
    )
    assert listing.status_code == 200 and f">{booking.pk}<" in listing.text
    overview = client.get(reverse("admin:flights_fareinventory_changelist"))
    assert overview.status_code == 200 and flight.code in overview.text


def test_block_and_unblock_seat_move_capacity(customer, flight):
    assert block_seat(sale_id=flight.sale_id, seat_no="20C") is True
    assert block_seat(sale_id=flight.sale_id, seat_no="20C") is False  # already blocked
    assert Seat.objects.get(sale=flight.sale, seat_no="20C").status == SeatStatus.BLOCKED
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").capacity == 167
    assert unblock_seat(sale_id=flight.sale_id, seat_no="20C") is True
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").capacity == 168
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["20C"]
    )
    assert block_seat(sale_id=flight.sale_id, seat_no="20C") is False  # held seats stay sold/held


def test_block_refused_when_every_unit_is_taken(customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=6)
    with pytest.raises(InvalidRequest):
        block_seat(sale_id=flight.sale_id, seat_no="1A")
    assert Seat.objects.get(sale=flight.sale, seat_no="1A").status == SeatStatus.AVAILABLE


def test_demo_data_loads_twice_without_duplicates():
    first = load_demo(days=2, password="pw-for-test-1")
    second = load_demo(days=2, password="pw-for-test-2")
    assert first.flights_created == 20 and second.flights_created == 0
    # 20 to come, and the departed week behind them (flights.demo.HISTORY_DAYS x 10 routes).
    assert Flight.objects.filter(status="SCHEDULED").count() == 20
    assert Flight.objects.count() == 20 + 10 * HISTORY_DAYS
    flight = Flight.objects.first()
    assert flight.sale.seats.count() == 180
    assert {i.fare_class: i.capacity for i in flight.sale.inventories.all()} == {
        "BUSINESS": 12,
        "ECONOMY": 168,
    }
    from django.contrib.auth import authenticate

    assert authenticate(username="demo", password="pw-for-test-2") is not None
    staff = authenticate(username="staff", password="pw-for-test-2")
    assert staff is not None and staff.is_staff
