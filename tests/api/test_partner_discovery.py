"""Issue 31, item 16: a protected sale can be discovered.  Flights and events carry their
waiting room (id, state, opens at, URLs) or null, and the room names its flight or event."""

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from tests.events.factories import EventFactory
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db


def protect(sale_id, *, opens_in=timedelta(hours=1)):
    return open_waiting_room(
        sale_id=sale_id,
        opens_at=timezone.now() + opens_in,
        admit_per_minute=10,
        max_inside=10,
    )


def expected_room(room, state):
    return {
        "roomId": room.pk,
        "state": state,
        "opensAt": room.opens_at.isoformat().replace("+00:00", "Z"),
        "roomUrl": f"/api/waiting-rooms/{room.pk}",
        "queueUrl": f"/api/waiting-rooms/{room.pk}/queue",
        "websocketUrl": f"/ws/waiting-room/{room.pk}/",
        "pageUrl": f"/waiting-room/{room.pk}/",
    }


def test_a_flight_without_a_room_says_null(anon, flight):
    assert anon.get(f"/api/flights/{flight.pk}").json()["waitingRoom"] is None


def test_a_protected_flight_carries_its_room_in_detail_and_search(anon, flight):
    room = protect(flight.sale_id)
    detail = anon.get(f"/api/flights/{flight.pk}").json()
    assert detail["waitingRoom"] == expected_room(room, "PREQUEUE")

    day = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date()
    found = anon.get(
        "/api/flights",
        {"from": flight.origin_id, "to": flight.destination_id, "date": day.isoformat()},
    )
    assert found.status_code == 200, found.content
    rows = [f for f in found.json() if f["id"] == flight.pk]
    assert rows and rows[0]["waitingRoom"]["roomId"] == room.pk


def test_a_protected_event_carries_its_room_and_the_room_names_the_event(api):
    event = EventFactory()
    room = protect(event.sale_id, opens_in=-timedelta(minutes=5))
    detail = api.get(f"/api/events/{event.pk}").json()
    assert detail["waitingRoom"] == expected_room(room, "OPEN")
    listed = [e for e in api.get("/api/events").json() if e["id"] == event.pk]
    assert listed and listed[0]["waitingRoom"]["roomId"] == room.pk

    facts = api.get(detail["waitingRoom"]["roomUrl"]).json()
    assert facts["roomId"] == room.pk and facts["saleId"] == room.pk
    assert facts["eventId"] == event.pk and facts["flightId"] is None
    assert facts["kind"] == "EVENT" and facts["state"] == "OPEN"


def test_the_room_of_a_flight_names_the_flight(api, flight):
    room = protect(flight.sale_id)
    facts = api.get(f"/api/waiting-rooms/{room.pk}").json()
    assert (facts["flightId"], facts["eventId"], facts["state"]) == (flight.pk, None, "PREQUEUE")


def test_the_schema_documents_the_room_and_the_id_vocabulary(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    parts = schema["components"]["schemas"]
    for owner in ("Flight", "Event"):
        assert "waitingRoom" in parts[owner]["properties"], owner
    assert {"roomId", "eventId", "flightId", "saleId", "state"} <= set(
        parts["WaitingRoom"]["properties"]
    )
    described = " ".join(
        op.get("description", "")
        for path, ops in schema["paths"].items()
        if path.startswith("/api/waiting-rooms")
        for op in ops.values()
        if isinstance(op, dict)
    )
    assert "`flightId`" in described and "`eventId`" in described and "`roomId`" in described
