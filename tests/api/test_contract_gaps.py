"""What schemathesis's coverage phase found the server reading more loosely than its schema
(tests/api/test_schema_phases.py): each is now a 400 (or 404) problem that changes nothing,
beside a control that the valid form still works."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.api.conftest import client_for, problem
from tests.events.factories import EventFactory
from tests.factories import FlightFactory
from waitroom.models import QueueEntry
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db


def test_the_bookings_list_refuses_a_negative_or_non_numeric_page(api):
    for query in ("offset=-1", "limit=0", "limit=abc", "offset=x"):
        problem(api.get(f"/api/bookings?{query}"), 400)
    assert api.get("/api/bookings?offset=0&limit=5").status_code == 200


def test_an_empty_event_date_is_a_bad_date_not_every_day(anon):
    EventFactory()
    problem(anon.get("/api/events?date="), 400)
    problem(anon.get("/api/events?date=tomorrow"), 400)
    assert anon.get("/api/events").status_code == 200


def test_a_waiting_room_join_whose_body_is_not_an_object_is_refused(customer):
    flight = FlightFactory()
    room = open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=10,
        max_inside=10,
    )
    api = client_for(customer)
    for body in ('"\\u0000x"', "[1, 2]", "3"):
        refused = api.post(
            f"/api/waiting-rooms/{room.pk}/queue", body, content_type="application/json"
        )
        problem(refused, 400)
    assert not QueueEntry.objects.filter(customer=customer).exists()
    # The control: an object (here empty) takes a place.
    joined = api.post(f"/api/waiting-rooms/{room.pk}/queue", {}, format="json")
    assert joined.status_code in (200, 201), joined.content
    assert QueueEntry.objects.filter(customer=customer).count() == 1


def test_an_offer_not_on_this_booking_is_not_found(api):
    response = api.post(
        "/api/bookings/123456/volunteer-offers/654321", {"accept": False}, format="json"
    )
    assert problem(response, 404)["type"].endswith("/volunteer-offer-not-found")
