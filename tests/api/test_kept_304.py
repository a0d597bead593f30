"""A replayed 304 of a cached seat map, kept finished per (request shape, view, ETag) and
given as it is to the next such request (config/hook_replay.py `HookReplay.keep` /
`finish`, config/cached_reads.py `_bare`; issue 26 target e).  Every answer is compared
byte for byte with the long way's over three rounds (record, replay and keep, kept); a
changed seat map or a stale ETag is never answered from a kept 304; a key without the ETag
is caught by the same comparison (the control)."""

from __future__ import annotations

import pytest
from django.http import HttpResponse, HttpResponseNotModified
from django.utils import translation

from bookings.live import publish_plan_change
from config import cached_reads, hook_replay
from kernel import redis_clients
from tests.api.test_cached_reads import build, event_seat_map_url, shapes, shapes_of
from tests.api.test_hook_replay import replay_of, rounds
from tests.api.test_lean_chain import answer, differences, seat_map_url
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept(monkeypatch):
    """The statuses answered from a kept answer, in order."""
    statuses = []
    real = hook_replay.finish

    def finish(done):
        response = real(done)
        statuses.append(response.status_code)
        return response

    monkeypatch.setattr(hook_replay, "finish", finish)
    return statuses


@pytest.fixture
def etag(flight):
    from tests.api.conftest import client_for

    return client_for().get(seat_map_url(flight), secure=True)["ETag"]


def three_rounds(settings, observed, kept, requests):
    """Each shape through the fast path in three rounds and the long way each time:
    ({name: differences}, [names answered from a kept 304 in round three])."""
    return rounds(settings, observed, kept, requests, count=3)


KEPT_304S = ["304", "304, strong form", "304 from a list", "304 for *", "Russian 304"]


def test_kept_304s_answer_as_the_long_way(settings, flight, etag, observed, kept):
    found, third = three_rounds(settings, observed, kept, shapes(flight, etag))
    assert found == {}
    assert third == KEPT_304S  # and nothing else: a 200 is never kept


def test_the_events_kept_304s_answer_as_the_long_way(settings, observed, kept):
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 60}  # no rebuild midway
    event = EventFactory()
    url = event_seat_map_url(event)
    from tests.api.conftest import client_for

    event_etag = client_for().get(url, secure=True)["ETag"]
    requests = shapes_of(
        url, event_etag, missing="/api/events/999999/seats", parent=f"/api/events/{event.pk}"
    )
    found, third = three_rounds(settings, observed, kept, requests)
    assert found == {}
    assert third == KEPT_304S


def changed_after_kept_304s(settings, flight, etag):
    """A 304 kept, then the seat map changes: (the client, the new ETag's answers, the fast
    way then the long way)."""
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    for _ in range(3):
        assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    publish_plan_change(sale_id=flight.sale_id)  # the live version: the old entry is stale
    changed = client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag)  # the long way rebuilds
    assert changed.status_code == 200  # not the kept 304
    assert changed["ETag"] != etag
    again = client.get(url, secure=True, HTTP_IF_NONE_MATCH=changed["ETag"])
    slow = build(settings, fast=False, lean=False)
    long_way = slow.get(url, secure=True, HTTP_IF_NONE_MATCH=changed["ETag"])
    return client, changed, answer(again), answer(long_way)


def test_a_changed_seat_map_after_a_kept_304_is_a_200_then_its_own_304(
    settings, flight, etag, kept
):
    client, changed, again, long_way = changed_after_kept_304s(settings, flight, etag)
    assert kept == [304]  # the third old-ETag read; the new ETag's first 304 is kept anew
    assert changed.json()["flightId"] == flight.pk
    assert again["status"] == 304
    assert differences(again, long_way) == []
    assert dict(again["headers"])["ETag"] == changed["ETag"]
    # The old ETag is a 200 with the body, fast or not: never the kept 304.
    stale = client.get(seat_map_url(flight), secure=True, HTTP_IF_NONE_MATCH=etag)
    assert (stale.status_code, stale.content) == (200, changed.content)


def test_control_a_kept_304_keyed_without_the_etag_is_caught(
    settings, flight, etag, kept, monkeypatch
):
    real = cached_reads._bare

    def without_etag(request):
        found = real(request)
        return None if found is None else found[0]

    monkeypatch.setattr(cached_reads, "_bare", without_etag)
    _, _, again, long_way = changed_after_kept_304s(settings, flight, etag)
    assert kept == [304, 304]  # the new ETag's 304 answered from the old one's
    assert any("ETag" in d for d in differences(again, long_way))  # the old ETag, kept


def test_redis_gone_after_a_kept_304_takes_the_long_way(settings, flight, etag, kept, monkeypatch):
    client = build(settings, fast=True)
    url = seat_map_url(flight)
    for _ in range(3):
        assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert kept == [304]
    monkeypatch.setattr(redis_clients, "cache_get_many", lambda keys, **kw: {})
    # The long way rebuilds from PostgreSQL: the same seats, so the same ETag and a 304 ...
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert kept == [304]  # ... but not the kept one: the cache was not read
    assert client.get(url, secure=True, HTTP_IF_NONE_MATCH='W/"x"').status_code == 200


def test_kept_answers_are_bounded_and_forgotten_when_a_setting_changes(
    settings, flight, etag, monkeypatch
):
    monkeypatch.setattr(hook_replay, "MAX_FINISHED", 1)
    client = build(settings, fast=True)
    replay = replay_of(client)
    url = seat_map_url(flight)
    for language in ("en", "de", "ru", "de"):  # three shapes, each recorded, then kept
        for _ in range(2):
            response = client.get(
                url, secure=True, HTTP_IF_NONE_MATCH=etag, HTTP_ACCEPT_LANGUAGE=language
            )
            assert response.status_code == 304
    assert len(replay.finished) == 1
    settings.LANGUAGE_CODE = "de"
    assert replay.finished == {}


def test_only_a_bare_answer_is_kept():
    assert hook_replay._bare_like(HttpResponseNotModified(headers={"ETag": 'W/"a"'}))
    with_cookie = HttpResponseNotModified()
    with_cookie.set_cookie("x", "1")
    closing = HttpResponseNotModified()
    closing._resource_closers.append(lambda: None)
    assert not hook_replay._bare_like(with_cookie)  # control: a cookie is not in the record
    assert not hook_replay._bare_like(closing)
    assert not hook_replay._bare_like(HttpResponse(b"body"))


def test_a_kept_304_leaves_the_threads_language_as_the_long_way_does(settings, flight, etag, kept):
    url = seat_map_url(flight)
    left = {}
    languages = ("de", "ru", "de", "en", "ru", "de", "en", "ru", "de")
    for fast in (True, False):
        client = build(settings, fast=fast, lean=fast)
        for language in languages:
            client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag, HTTP_ACCEPT_LANGUAGE=language)
            left.setdefault(fast, []).append(translation.get_language())
    assert left[True] == left[False] == list(languages)
    assert kept == [304] * 3  # each shape's third read ("de" twice), after another language
