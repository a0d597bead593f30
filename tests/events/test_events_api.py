from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from events.models import EventCategory
from events.services import cancel_event
from tests.api.conftest import problem
from tests.events.factories import EventFactory, VenueFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def anon():
    from rest_framework.test import APIClient

    return APIClient()


def test_search_filters_by_city_category_and_local_date(anon):
    now = timezone.now()
    # Berlin is UTC+1 in December: 23:30Z on the 19th is 00:30 on the 20th there.
    late = datetime(now.year + 1, 12, 19, 23, 30, tzinfo=UTC)
    berlin = VenueFactory(city="Berlin")
    hamburg = VenueFactory(city="Hamburg")
    concert = EventFactory(name="Late concert", venue=berlin, starts_at=late)
    match = EventFactory(
        name="Derby", venue=berlin, category=EventCategory.SPORT, starts_at=late - timedelta(days=1)
    )
    EventFactory(name="Harbour film", venue=hamburg, category=EventCategory.CINEMA)
    EventFactory(name="Not yet public", venue=berlin, publish=False, assignments=())

    everything = anon.get("/api/events").json()
    # Soonest first (the film is in 30 days); the draft is not public.
    assert [e["name"] for e in everything] == ["Harbour film", "Derby", "Late concert"]

    in_berlin = anon.get("/api/events", {"city": "berlin"}).json()
    assert [e["id"] for e in in_berlin] == [match.pk, concert.pk]
    day = f"{now.year + 1}-12-20"
    assert [e["id"] for e in anon.get("/api/events", {"date": day}).json()] == [concert.pk]
    sport = anon.get("/api/events", {"category": "SPORT", "city": "Berlin"}).json()
    assert [e["id"] for e in sport] == [match.pk]


def test_search_result_shape_is_camel_case(anon):
    event = EventFactory(starts_at=datetime(timezone.now().year + 1, 7, 1, 18, 0, tzinfo=UTC))
    (found,) = anon.get("/api/events").json()
    assert found["id"] == event.pk
    assert found["startsAt"].startswith(f"{timezone.now().year + 1}-07-01T18:00:00")
    assert found["startsLocal"] == f"{timezone.now().year + 1}-07-01T20:00:00+02:00"
    assert found["saleOpen"] is True
    assert found["venue"]["timeZone"] == "Europe/Berlin"
    assert found["priceFrom"] == {"price": "30.00", "currency": "EUR"}
    assert [c["code"] for c in found["priceCategories"]] == ["GA", "B", "A"]
    assert found["priceCategories"][2] == {
        "code": "A",
        "name": "Front stalls",
        "price": "80.00",
        "currency": "EUR",
        "colour": "#b91c1c",
    }


def test_bad_filters_are_problems(anon):
    body = problem(anon.get("/api/events", {"date": "tomorrow", "category": "OPERA"}), 400)
    assert {p["name"] for p in body["invalidParams"]} == {"date", "category"}


def test_detail_lists_places_per_category_and_sections(anon):
    event = EventFactory()
    body = anon.get(f"/api/events/{event.pk}").json()
    assert {c["code"]: c["places"] for c in body["priceCategories"]} == {
        "A": 12,
        "B": 22,
        "GA": 50,
    }
    assert body["sections"] == [
        {
            "name": "Stalls",
            "kind": "SEATED",
            "places": 24,
            "categories": ["A", "B"],
            "accessible": 2,
            "restrictedView": 0,
        },
        {
            "name": "Balcony",
            "kind": "SEATED",
            "places": 10,
            "categories": ["B"],
            "accessible": 0,
            "restrictedView": 2,
        },
        {
            "name": "Floor",
            "kind": "STANDING",
            "places": 50,
            "categories": ["GA"],
            "accessible": 0,
            "restrictedView": 0,
        },
    ]
    assert body["description"] == "An evening of music."


def test_detail_of_a_draft_or_unknown_event_is_404_and_cancelled_is_shown(anon):
    draft = EventFactory(publish=False, assignments=())
    assert problem(anon.get(f"/api/events/{draft.pk}"), 404)["type"].endswith("event-not-found")
    problem(anon.get("/api/events/999999"), 404)
    cancelled = EventFactory()
    cancel_event(event_id=cancelled.pk)
    assert anon.get(f"/api/events/{cancelled.pk}").json()["status"] == "CANCELLED"
    assert anon.get("/api/events").json() == []


def test_dates_at_the_end_of_the_calendar_find_nothing(anon):
    EventFactory()
    for day in ("9999-12-31", "0001-01-01"):
        assert anon.get("/api/events", {"date": day}).json() == []


def test_the_schema_documents_the_event_endpoints(anon):
    paths = anon.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert {"/api/events", "/api/events/{eventId}"} <= set(paths)
    search = paths["/api/events"]["get"]
    assert {p["name"] for p in search["parameters"]} >= {"city", "date", "category"}
