"""An event's seated category is sold by seat only (issue 24, item 4): `passengers` is for
standing areas.  A catalogue rule (`sells_seatless`): flights keep selling seatless units on
their seated cabins, which is how the overbooking margin is sold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless
from bookings.holding import create_held_booking
from bookings.models import Booking, Inventory, Seat, SeatStatus
from kernel.errors import DomainError
from tests.api.conftest import client_for, problem
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(customer):
    return client_for(customer)


def state(sale_id: int):
    return (
        Booking.objects.count(),
        sorted(Inventory.objects.filter(sale_id=sale_id).values_list("fare_class", "held", "sold")),
        Seat.objects.filter(sale_id=sale_id).exclude(status=SeatStatus.AVAILABLE).count(),
    )


def test_a_seated_category_booked_by_passengers_is_refused_with_a_problem(api):
    event = EventFactory()
    before = state(event.sale_id)

    body = {"eventId": event.pk, "category": "A", "passengers": 2}
    data = problem(api.post("/api/bookings", body, format="json"), 400)

    assert data["type"] == "https://seatkeeper.dev/problems/seats-required"
    assert "sold by seat" in data["detail"] and data["fareClass"] == "A"
    assert state(event.sale_id) == before


def test_controls_a_standing_area_and_a_flight_cabin_are_still_sold_seatless(api):
    event = EventFactory()
    body = {"eventId": event.pk, "category": "GA-3", "passengers": 2}
    response = api.post("/api/bookings", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["seats"] == []

    flight = FlightFactory()
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "passengers": 2}
    response = api.post("/api/bookings", body, format="json")
    assert response.status_code == 201, response.content


def test_the_hold_service_refuses_it_for_every_door(customer):
    event = EventFactory()
    with pytest.raises(DomainError) as raised:
        hold_seatless(customer=customer, sale_id=event.sale_id, fare_class="B", passengers=1)
    assert raised.value.code == "seats-required"


def test_the_standing_page_form_refuses_a_seated_category(client, customer):
    event = EventFactory()
    client.force_login(customer)
    before = state(event.sale_id)
    response = client.post(
        f"/events/{event.pk}/hold-standing/",
        {"area": "A", "quantity": "2", "name": "Ana"},
        follow=True,
    )
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]]
    assert state(event.sale_id) == before


def _seatless_units_written_past_the_rule(sale_id: int, fare_class: str, customer) -> None:
    """What the old hold path wrote: live units without seats, counted in `held`."""
    inventory = Inventory.objects.get(sale_id=sale_id, fare_class=fare_class)
    now = timezone.now()
    create_held_booking(
        customer_id=customer.pk,
        sale_id=sale_id,
        fare_class=fare_class,
        units=2,
        amount=inventory.price * 2,
        currency=inventory.currency,
        expires_at=now + timedelta(minutes=10),
        now=now,
    )
    Inventory.objects.filter(pk=inventory.pk).update(held=F("held") + 2)


def test_check_inventory_reports_live_seatless_units_in_a_seated_category(customer):
    event = EventFactory()
    _seatless_units_written_past_the_rule(event.sale_id, "A", customer)

    problems = check_inventory(sale_id=event.sale_id)

    assert problems == [
        f"sale {event.sale_id} A: 2 live unit(s) without a seat in a class sold only by seat"
    ]


def test_control_check_inventory_accepts_seatless_standing_and_flight_units(customer):
    event = EventFactory()
    _seatless_units_written_past_the_rule(event.sale_id, "GA-3", customer)
    flight = FlightFactory()
    _seatless_units_written_past_the_rule(flight.sale_id, "ECONOMY", customer)

    assert check_inventory(sale_id=event.sale_id) == []
    assert check_inventory(sale_id=flight.sale_id) == []
