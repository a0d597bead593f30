"""A flight search answered with the quick query readers (flights.search_input) is the search
answered the long way (the serializer), byte for byte: status, headers in order, body, for
good queries, 304s and every kind of 400; the control shows a wrong reader is caught."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flights import search_input
from tests.api.conftest import client_for
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db

QUERIES = [
    "from=SGN&to=HAN&date=2026-12-20",
    "from=sgn&to=han&date=2026-12-20&unknown=1",
    "from=XXX&from=SGN&to=HAN&date=2026-12-20",  # repeated: the last counts
    "from=XXX&from=SGN&to=HAN&date=2026-12-20&x=1",  # the same, read from the QueryDict
    "from=SGN&to=HAN&date=2026-12-20&date=2026-02-30",
    "from=SGN&to=HAN&date=2026-12-2%30",
    "from=SGN&to=HAN&date=2026-12-20;x=1",
    "from=SGN&to=HAN&date=2026-12-20&limit=1",
    "from=SGN&to=HAN&date=2026-12-20&limit=1&offset=1",
    "from=SGN&to=HAN&date=0001-01-01",
    "from=SGN&to=HAN&date=9999-12-31",
    "from=SGN&to=HAN&date=2026-1-2",
    "from=SGN&to=HAN&date=2026-02-30",
    "from=SGN&to=HAN&date=20.12.2026",
    "from=SGNX&to=HAN&date=2026-12-20",
    "from=%C3%84BC&to=HAN&date=2026-12-20",
    "from=+SGN&to=HAN&date=2026-12-20",
    "from=SGN&to=HAN",
    "",
    "from=SGN&to=HAN&date=2026-12-20&limit=0",
]


@pytest.fixture
def flights(db):
    return [
        FlightFactory(code=f"VN{i}", departure_at=datetime(2026, 12, 20, 3 + i, tzinfo=UTC))
        for i in range(2)
    ]


def answer(query: str, **headers) -> tuple:
    response = client_for().get(f"/api/flights?{query}", **headers)
    kept = [(k, v) for k, v in response.items() if k.lower() != "x-request-id"]
    return response.status_code, kept, response.content


def both_ways(monkeypatch, query: str, **headers) -> tuple[tuple, tuple]:
    quick = answer(query, **headers)
    with monkeypatch.context() as long_way:
        long_way.setattr(search_input, "_quick", lambda data: None)
        long_way.setattr(search_input, "_quick_query_string", lambda raw: None)
        return quick, answer(query, **headers)


@pytest.mark.parametrize("query", QUERIES)
def test_the_quick_reader_answers_as_the_serializer(monkeypatch, flights, query):
    quick, long = both_ways(monkeypatch, query)
    assert quick == long
    if quick[0] == 200:
        etag = dict(quick[1])["ETag"]
        assert both_ways(monkeypatch, query, HTTP_IF_NONE_MATCH=etag)[0][0] == 304
        matched = both_ways(monkeypatch, query, HTTP_IF_NONE_MATCH=etag)
        assert matched[0] == matched[1]


def test_control_a_wrong_reader_answers_otherwise(monkeypatch, flights):
    # Reading the first of a repeated key, not the last: the comparison must see it.
    monkeypatch.setattr(search_input, "_last", lambda data, key: dict.get(data, key, [None])[0])
    quick, long = both_ways(monkeypatch, "from=XXX&from=SGN&to=HAN&date=2026-12-20&x=1")
    assert quick != long


def test_control_a_wrong_raw_reader_answers_otherwise(monkeypatch, flights):
    # The raw query string's reader taking the first of a repeated key.
    def first_wins(raw):
        pairs = [pair.split("=") for pair in raw.split("&")]
        return REAL_RAW("&".join("=".join(p) for p in reversed(pairs)))

    monkeypatch.setattr(search_input, "_quick_query_string", first_wins)
    quick, long = both_ways(monkeypatch, "from=XXX&from=SGN&to=HAN&date=2026-12-20")
    assert quick != long


REAL_RAW = search_input._quick_query_string
