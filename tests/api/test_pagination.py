"""Issue 31, item 20: one documented pagination on every list: `limit` and `offset`, and a
`Link` header with rel="next" while more follow (bare arrays stay arrays)."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seats
from tests.events.factories import EventFactory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db


def next_link(response) -> str | None:
    match = re.search(r'<([^>]+)>; rel="next"', response.get("Link", ""))
    return match.group(1) if match else None


def follow(client, url) -> list:
    """Every item of a list, page by page along rel="next"."""
    items, pages = [], 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        items += body["results"] if isinstance(body, dict) else body
        url, pages = next_link(response), pages + 1
        assert pages < 50
    return items


def test_events_go_past_the_old_cap_of_100_with_next_links(anon):
    start = timezone.now() + timedelta(days=3)
    made = [EventFactory(starts_at=start + timedelta(minutes=n)) for n in range(105)]
    first = anon.get("/api/events", {"limit": 40})
    assert len(first.json()) == 40 and next_link(first)
    ids = [e["id"] for e in follow(anon, "/api/events?limit=40")]
    assert ids == [e.pk for e in made]  # soonest first, none lost, none twice
    last = anon.get("/api/events", {"limit": 40, "offset": 80})
    assert len(last.json()) == 25 and next_link(last) is None and 'rel="prev"' in last["Link"]


def test_flight_search_is_paged_the_same_way(anon):
    day = datetime(2026, 12, 20, 3, tzinfo=UTC)
    made = [FlightFactory(code=f"VN{n}", departure_at=day + timedelta(minutes=n)) for n in range(5)]
    query = "from=SGN&to=HAN&date=2026-12-20"
    whole = anon.get(f"/api/flights?{query}")
    assert [f["id"] for f in whole.json()] == [f.pk for f in made] and next_link(whole) is None
    first = anon.get(f"/api/flights?{query}&limit=2")
    assert len(first.json()) == 2 and next_link(first)
    assert [f["id"] for f in follow(anon, f"/api/flights?{query}&limit=2")] == [f.pk for f in made]


def test_bookings_keep_their_body_and_gain_the_link(api, customer, flight):
    for seat in ("12A", "12B", "12C"):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[seat]
        )
    first = api.get("/api/bookings", {"limit": 2})
    body = first.json()
    assert body["count"] == 3 and len(body["results"]) == 2
    assert next_link(first) == body["next"]
    assert len(follow(api, "/api/bookings?limit=2")) == 3


@pytest.mark.parametrize("bad", [{"limit": 0}, {"limit": 201}, {"offset": -1}, {"limit": "x"}])
def test_a_bad_page_is_a_400_problem(anon, bad):
    response = anon.get("/api/events", bad)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")


def test_the_schema_documents_limit_offset_and_link_on_every_list(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/api/bookings", "/api/flights", "/api/events"):
        op = schema["paths"][path]["get"]
        names = {p["name"] for p in op.get("parameters", [])}
        assert {"limit", "offset"} <= names, path
        assert "Link" in op["responses"]["200"].get("headers", {}), path


@pytest.mark.parametrize(
    "query",
    [{}, {"limit": "5"}, {"offset": "3"}, {"limit": "200", "offset": "0"}, {"other": "x"}],
    ids=str,
)
@pytest.mark.parametrize("default_limit", [50, 20])
def test_the_page_is_what_the_serializer_gives(query, default_limit):
    """`page_of` answers the first page without its serializer (issue 26): the same page."""
    from django.http import QueryDict

    from kernel.web.pagination import Page, PageQuerySerializer, page_of

    data = PageQuerySerializer(data={k: v for k, v in query.items() if k in ("limit", "offset")})
    assert data.is_valid()
    expected = Page(
        limit=data.validated_data.get("limit", default_limit),
        offset=data.validated_data.get("offset", 0),
    )
    params = QueryDict(mutable=True)
    params.update(query)
    assert page_of(params, default_limit=default_limit) == expected
