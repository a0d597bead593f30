"""Problem types say what happened in words that fit the sale (issue 24, item 14): events get
sale-neutral slugs (`sale-not-bookable`, `seat-blocked`, ...), flights keep the slugs their
clients already know (`flight-not-bookable`, ...), and a blocked seat is "not for sale", not
"just taken by someone else"."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.inventory import block_seat
from events.models import Event
from events.services import cancel_event
from flights.catalogue import FLIGHT_PROBLEM_TYPES
from flights.models import Flight
from tests.api.conftest import client_for, problem
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db

PROBLEMS = "https://seatkeeper.dev/problems/"


@pytest.fixture
def api(customer):
    return client_for(customer)


def event_hold(api, event, **extra):
    body = {"eventId": event.pk, "category": "A", "seats": ["1-1-1"], **extra}
    return api.post("/api/bookings", body, format="json")


def flight_hold(api, flight, **extra):
    body = {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        "seats": ["12A"],
        "exitRowConfirmed": True,
        **extra,
    }
    return api.post("/api/bookings", body, format="json")


@pytest.mark.parametrize("close", ["cancelled", "started"])
def test_a_closed_event_answers_sale_not_bookable(api, close):
    event = EventFactory()
    if close == "cancelled":
        cancel_event(event_id=event.pk)
    else:
        Event.objects.filter(pk=event.pk).update(starts_at=timezone.now() - timedelta(minutes=1))

    data = problem(event_hold(api, event), 409)

    assert data["type"] == f"{PROBLEMS}sale-not-bookable"
    assert "flight" not in (data["title"] + data["detail"]).lower()


def test_control_a_departed_flight_keeps_flight_not_bookable(api):
    flight = FlightFactory()
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=timezone.now() - timedelta(hours=3),
        arrival_at=timezone.now() - timedelta(hours=1),
    )
    assert problem(flight_hold(api, flight), 409)["type"] == f"{PROBLEMS}flight-not-bookable"


def test_a_blocked_seat_is_not_for_sale_rather_than_just_taken(api):
    event = EventFactory()
    assert block_seat(sale_id=event.sale_id, seat_no="1-1-1")

    data = problem(event_hold(api, event), 409)

    assert data["type"] == f"{PROBLEMS}seat-blocked" and data["seats"] == ["1-1-1"]
    assert "not for sale" in data["detail"] and "someone else" not in data["detail"]


def test_a_blocked_flight_seat_keeps_its_old_slug_with_the_right_words(api):
    flight = FlightFactory()
    assert block_seat(sale_id=flight.sale_id, seat_no="12A")

    data = problem(flight_hold(api, flight), 409)

    assert data["type"] == f"{PROBLEMS}seat-unavailable"
    assert "not for sale" in data["detail"] and "someone else" not in data["detail"]


def test_control_a_seat_taken_by_someone_else_still_says_so(api, other_customer):
    event = EventFactory()
    assert event_hold(client_for(other_customer), event).status_code == 201

    data = problem(event_hold(api, event), 409)

    assert data["type"] == f"{PROBLEMS}seat-unavailable" and "someone else" in data["detail"]


@pytest.mark.parametrize(
    ("payload", "event_type"),
    [
        ({"seats": ["1-3-1"]}, "seat-wrong-class"),  # row 3 is category B
        ({"category": "Z"}, "class-not-sold"),
    ],
)
def test_event_class_errors_use_sale_neutral_types(api, payload, event_type):
    data = problem(event_hold(api, EventFactory(), **payload), 400)
    assert data["type"] == f"{PROBLEMS}{event_type}"


def test_control_a_flight_seat_in_another_cabin_keeps_seat_wrong_cabin(api):
    data = problem(flight_hold(api, FlightFactory(), seats=["1A"]), 400)
    assert data["type"] == f"{PROBLEMS}seat-wrong-cabin"


def test_every_flight_slug_is_documented_in_the_openapi_schema(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    create = schema["paths"]["/api/bookings"]["post"]
    text = create["description"] + " ".join(
        r.get("description", "") for r in create["responses"].values()
    )
    for neutral, flights in FLIGHT_PROBLEM_TYPES:
        assert f"`{neutral}`" in text and f"`{flights}`" in text, (neutral, flights)
