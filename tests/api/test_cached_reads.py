"""The cached seat map's fast path (config/cached_reads.py, issue 26) answers exactly as the
long way does: the same status, headers in order, cookies, bytes, access log line and request
metric, request by request; whatever it cannot answer the same goes the long way."""

from __future__ import annotations

import pytest
from django.core.cache import cache, caches
from django.core.exceptions import MiddlewareNotUsed
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.throttling import AnonRateThrottle

from bookings.live import publish_plan_change
from config import cached_reads, hook_replay
from events import seat_map as event_seat_map
from events.api import EventSeatMapApi
from flights import selectors
from flights.api import SeatMapApi
from kernel import redis_clients
from tests.api.conftest import client_for
from tests.api.test_lean_chain import SECURITY, answer, differences, seat_map_url
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fast_answers(monkeypatch):
    """The paths the fast path answered, in order."""
    answered = []
    real = hook_replay.HookReplay.__call__

    def call(self, request):
        if getattr(request, "cached_read", None):
            answered.append(request.path)
        return real(self, request)

    monkeypatch.setattr(hook_replay.HookReplay, "__call__", call)
    return answered


def build(settings, *, fast: bool, lean: bool = True, skips: list[str] | None = None):
    settings.CACHED_READ_FAST_PATH = fast
    settings.LEAN_API_REQUESTS = lean
    if skips is not None:
        settings.LEAN_API_SKIPS = skips
    client = client_for()
    client.handler.load_middleware()  # now, under the settings of this moment
    return client


@pytest.fixture
def etag(flight):
    """The seat map read once (warm: the cache and this process's flight-to-sale memo)."""
    return client_for().get(seat_map_url(flight), secure=True)["ETag"]


def shapes(flight, etag: str) -> list[tuple[str, str, dict, bool]]:
    """(name, path, request headers, answered by the fast path)."""
    return shapes_of(
        seat_map_url(flight),
        etag,
        missing="/api/flights/999999/seats",
        parent=f"/api/flights/{flight.pk}",
    )


def shapes_of(url: str, etag: str, *, missing: str, parent: str):
    """A seat map's request shapes: `missing` is a seat map that does not exist, `parent`
    the URL of what it belongs to."""
    on = {"secure": True}
    return [
        ("warm 200", url, on, True),
        ("304", url, {**on, "HTTP_IF_NONE_MATCH": etag}, True),
        ("304, strong form", url, {**on, "HTTP_IF_NONE_MATCH": etag.removeprefix("W/")}, True),
        ("304 from a list", url, {**on, "HTTP_IF_NONE_MATCH": f'"old", {etag}'}, True),
        ("304 for *", url, {**on, "HTTP_IF_NONE_MATCH": "*"}, True),
        ("stale ETag: 200", url, {**on, "HTTP_IF_NONE_MATCH": 'W/"1.0.stale"'}, True),
        ("German", url, {**on, "HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9,en;q=0.5"}, True),
        (
            "Russian 304",
            url,
            {**on, "HTTP_ACCEPT_LANGUAGE": "ru", "HTTP_IF_NONE_MATCH": etag},
            True,
        ),
        ("a language we lack", url, {**on, "HTTP_ACCEPT_LANGUAGE": "fr, xx;q=0.1"}, True),
        ("Accept */*", url, {**on, "HTTP_ACCEPT": "*/*"}, True),
        ("Accept JSON", url, {**on, "HTTP_ACCEPT": "application/json"}, True),
        ("the caller's request id", url, {**on, "HTTP_X_REQUEST_ID": "abc-12345"}, True),
        ("a bad request id", url, {**on, "HTTP_X_REQUEST_ID": "no\nway"}, True),
        ("a browser's headers", url, {**on, "HTTP_USER_AGENT": "Mozilla/5.0"}, True),
        # Short-circuited by a hook, through the same hooks:
        ("plain HTTP: SSL redirect", url, {}, True),
        ("a host we do not serve", url, {**on, "HTTP_HOST": "evil.example"}, True),
        # The long way:
        ("Accept HTML: 406", url, {**on, "HTTP_ACCEPT": "text/html"}, False),
        ("Accept with q", url, {**on, "HTTP_ACCEPT": "application/json;q=0.9"}, False),
        ("a query", f"{url}?format=json", on, False),
        ("an unknown query", f"{url}?x=1", on, False),
        ("a bad token", url, {**on, "HTTP_AUTHORIZATION": "Token nope"}, False),
        ("a cookie", url, {**on, "HTTP_COOKIE": "csrftoken=" + "x" * 32}, False),
        ("no such flight or event", missing, on, False),
        ("slash appended?", f"{url}/", on, False),
        ("the flight or event", parent, on, False),
        ("no such URL", "/api/nothing-here", on, False),
    ]


def compare(settings, observed, fast_answers, flight, etag, *, skips=None, method="get"):
    """Each shape through the fast path and the long way (Django's chain, fast path off):
    {name: differences}, and {name: whether the fast path answered it}."""
    return compare_shapes(
        settings, observed, fast_answers, shapes(flight, etag), skips=skips, method=method
    )


def compare_shapes(settings, observed, fast_answers, requests, *, skips=None, method="get"):
    fast = build(settings, fast=True, skips=skips)
    slow = build(settings, fast=False, lean=False)
    found, answered = {}, {}
    for name, path, kwargs, _ in requests:
        del observed[:], fast_answers[:]
        a = answer(getattr(fast, method)(path, **kwargs))
        fast_seen, answered[name] = list(observed), bool(fast_answers)
        del observed[:]
        b = answer(getattr(slow, method)(path, **kwargs))
        found[name] = differences(a, b) + (
            [f"observed {fast_seen} != {observed}"] if fast_seen != observed else []
        )
    return found, answered


def test_the_fast_path_answers_as_the_long_way(settings, flight, etag, observed, fast_answers):
    found, answered = compare(settings, observed, fast_answers, flight, etag)
    assert {name: d for name, d in found.items() if d} == {}
    expected = {name: fast for name, _, _, fast in shapes(flight, etag)}
    assert answered == expected


def test_the_304_and_the_stale_etag(settings, flight, etag, fast_answers):
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    not_modified = client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag)
    assert (not_modified.status_code, not_modified.content, not_modified["ETag"]) == (
        304,
        b"",
        etag,
    )
    stale = client.get(url, secure=True, HTTP_IF_NONE_MATCH='W/"1.0.stale"')
    assert stale.status_code == 200  # control: not a 304
    assert stale.json()["flightId"] == flight.pk
    assert fast_answers == [url, url]


def test_control_a_fast_path_without_the_security_middleware_is_caught(
    settings, flight, etag, observed, fast_answers
):
    skips = [*settings.LEAN_API_SKIPS, SECURITY]
    found, _ = compare(settings, observed, fast_answers, flight, etag, skips=skips)
    assert any("Strict-Transport-Security" in d for d in found["warm 200"])
    assert any("X-Content-Type-Options" in d for d in found["304"])
    assert found["plain HTTP: SSL redirect"]  # 200 instead of the 301


def test_head_and_other_methods_go_the_long_way(settings, flight, etag, fast_answers):
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    assert client.head(url, secure=True).status_code == 200
    assert client.options(url, secure=True).status_code == 200
    assert client.post(url, secure=True).status_code == 405
    assert fast_answers == []
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url]  # control


def test_a_miss_a_stale_entry_and_redis_down_go_the_long_way(
    settings, flight, etag, fast_answers, monkeypatch
):
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    cache.clear()  # a miss: the long way rebuilds it, then the fast path answers
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == []
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url]
    # Past SEAT_MAP_SECONDS: the long way's reader rebuilds (or serves it while one does).
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 0}
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert fast_answers == [url]
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 3}
    # Redis down (the cache answers nothing): the long way, which rebuilds from PostgreSQL.
    monkeypatch.setattr(redis_clients, "cache_get_many", lambda keys, **kw: {})
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert fast_answers == [url]


def test_a_flight_this_process_has_not_met_goes_the_long_way(
    settings, flight, etag, fast_answers, monkeypatch
):
    # A fresh process: the cache is warm, the flight's sale not yet known here.
    monkeypatch.setattr(selectors._sale_of_flight, "found", {})
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert fast_answers == []
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert fast_answers == [url]  # the long way met it


def test_a_throttle_or_a_permission_on_the_view_sends_it_the_long_way(
    settings, flight, etag, fast_answers, monkeypatch
):
    """No throttle or permission applies to the seat map today (the view is AllowAny and has
    no throttle, and REST_FRAMEWORK names no default throttle); one added later must apply."""
    assert SeatMapApi.throttle_classes == []
    assert "DEFAULT_THROTTLE_CLASSES" not in settings.REST_FRAMEWORK
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    monkeypatch.setattr(SeatMapApi, "throttle_classes", [AnonRateThrottle])
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]},
    }
    monkeypatch.setattr(AnonRateThrottle, "rate", "1/min", raising=False)
    statuses = [client.get(url, secure=True).status_code for _ in range(2)]
    assert statuses == [200, 429]
    assert fast_answers == []
    monkeypatch.setattr(SeatMapApi, "throttle_classes", [])
    monkeypatch.setattr(SeatMapApi, "permission_classes", [IsAuthenticated])
    assert client.get(url, secure=True).status_code == 401
    assert fast_answers == []


def test_an_unknown_middleware_turns_the_fast_path_off(settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "config.middleware.RequestIdMiddleware"]
    with pytest.raises(MiddlewareNotUsed):
        cached_reads.CachedReadMiddleware(lambda request: None)
    settings.MIDDLEWARE = settings.MIDDLEWARE[:-1]
    assert cached_reads.CachedReadMiddleware(lambda request: None).hooks  # control


def test_the_lean_chain_still_builds_with_the_fast_path_off(settings):
    client = build(settings, fast=False)
    fork = client.handler._middleware_chain.__wrapped__
    assert fork.lean is not None


def test_under_asgi_the_fast_path_answers_the_same(settings, flight, etag, fast_answers):
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    answers = []
    for fast in (True, False):
        settings.CACHED_READ_FAST_PATH = fast
        get = async_to_sync(AsyncClient().get)
        answers += [
            answer(get(seat_map_url(flight), secure=True)),
            answer(get(seat_map_url(flight), secure=True, headers={"If-None-Match": etag})),
        ]
    assert [a["status"] for a in answers] == [200, 304, 200, 304]
    assert differences(answers[0], answers[2]) == differences(answers[1], answers[3]) == []
    assert fast_answers == [seat_map_url(flight)] * 2


# The events' seat map (`EventSeatMapApi`, events.seat_map.cached_seat_map_json): the same
# shapes, the same comparison, and what is its own: the entry's key holds the live version,
# so a seat or plan change is a miss; the event's sale is remembered per process.


def event_seat_map_url(event) -> str:
    return f"/api/events/{event.pk}/seats"


@pytest.fixture
def event(settings):
    # Entries live SEAT_MAP_SECONDS (3): long enough here that none expires mid-comparison
    # (a rebuilt body has a new `generatedAt`, which the comparison would call a difference).
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 60}
    return EventFactory()


@pytest.fixture
def event_etag(event):
    """The event's seat map read once (warm: the cache and this process's event-to-sale memo)."""
    return client_for().get(event_seat_map_url(event), secure=True)["ETag"]


def event_shapes(event, etag: str):
    return shapes_of(
        event_seat_map_url(event),
        etag,
        missing="/api/events/999999/seats",
        parent=f"/api/events/{event.pk}",
    )


def test_the_events_seat_map_answers_as_the_long_way(
    settings, event, event_etag, observed, fast_answers
):
    requests = event_shapes(event, event_etag)
    found, answered = compare_shapes(settings, observed, fast_answers, requests)
    assert {name: d for name, d in found.items() if d} == {}
    assert answered == {name: fast for name, _, _, fast in requests}
    assert sum(answered.values()) == 16


def test_control_without_its_entry_in_reads_the_events_seat_map_goes_the_long_way(
    settings, event, event_etag, observed, fast_answers, monkeypatch
):
    monkeypatch.delitem(cached_reads.READS, EventSeatMapApi)
    requests = event_shapes(event, event_etag)
    found, answered = compare_shapes(settings, observed, fast_answers, requests)
    assert {name: d for name, d in found.items() if d} == {}
    assert not any(answered.values())  # so the test above sees the fast path answer


def test_the_events_seat_map_fast_path_asks_postgresql_nothing(
    settings, event, event_etag, fast_answers, django_assert_num_queries
):
    client = build(settings, fast=True)
    url = event_seat_map_url(event)
    with django_assert_num_queries(0):
        assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=event_etag).status_code == 304
        assert client.get(url, secure=True).json()["eventId"] == event.pk
    assert fast_answers == [url, url]


def test_an_event_seat_change_a_miss_an_unmet_event_and_redis_down_go_the_long_way(
    settings, event, event_etag, fast_answers, monkeypatch
):
    client = build(settings, fast=True)
    url = event_seat_map_url(event)
    # A seat or plan change bumps the live version: the old entry is not the answer any more.
    publish_plan_change(sale_id=event.sale_id)
    changed = client.get(url, secure=True, HTTP_IF_NONE_MATCH=event_etag)
    assert (changed.status_code, fast_answers) == (200, [])
    assert changed["ETag"] != event_etag  # control: the old ETag is not a 304 any more
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=changed["ETag"]).status_code == 304
    assert fast_answers == [url]
    del fast_answers[:]
    cache.clear()  # a miss: the long way rebuilds it, then the fast path answers
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == []
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url]
    # A process that has not met the event: the long way asks PostgreSQL for its sale once.
    monkeypatch.setattr(event_seat_map._sale_of_event, "found", {})
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url]
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url, url]
    # Redis down (the cache answers nothing): the long way, which rebuilds from PostgreSQL.
    monkeypatch.setattr(caches["default"], "get", lambda key, default=None, **kw: default)
    assert client.get(url, secure=True).status_code == 200
    assert fast_answers == [url, url]


def test_an_event_not_on_sale_is_404_the_long_way_and_not_remembered(settings, fast_answers):
    draft = EventFactory(publish=False)
    assert draft.sale_id is None
    client = build(settings, fast=True)
    url = event_seat_map_url(draft)
    for _ in range(2):
        response = client.get(url, secure=True)
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/problem+json")
    assert fast_answers == []
    assert event_seat_map._sale_of_event.known(draft.pk) is None


def test_a_permission_or_a_throttle_on_the_events_seat_map_sends_it_the_long_way(
    settings, event, event_etag, fast_answers, monkeypatch
):
    assert EventSeatMapApi.throttle_classes == []
    client = build(settings, fast=True)
    url = event_seat_map_url(event)
    monkeypatch.setattr(EventSeatMapApi, "permission_classes", [IsAuthenticated])
    assert client.get(url, secure=True).status_code == 401
    monkeypatch.setattr(EventSeatMapApi, "permission_classes", [AllowAny])
    monkeypatch.setattr(EventSeatMapApi, "throttle_classes", [AnonRateThrottle])
    monkeypatch.setattr(AnonRateThrottle, "rate", "1/min", raising=False)
    statuses = [client.get(url, secure=True).status_code for _ in range(2)]
    assert statuses == [200, 429]
    assert fast_answers == []
