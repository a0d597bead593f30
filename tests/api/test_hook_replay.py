"""The hooks' replay on a cached read (config/hook_replay.py, issue 26): each request shape
sent twice through the fast path (the hooks recorded, then replayed), both answers compared
byte for byte with the long way's; shapes that differ only in an input the hooks read are
mixed, so that a key missing that input replays the wrong record, which the controls show."""

from __future__ import annotations

import gc
import re
import weakref

import pytest
from django.test import RequestFactory
from django.utils import translation

from config import cached_reads, hook_replay
from flights.api import SeatMapApi
from tests.api.test_cached_reads import build, shapes
from tests.api.test_lean_chain import answer, differences, seat_map_url

pytestmark = pytest.mark.django_db

PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


@pytest.fixture
def replayed(monkeypatch):
    """The statuses answered by a replay (or a kept replayed 304: `finish`), in order."""
    statuses = []
    real, real_finish = hook_replay.replay, hook_replay.finish

    def replay(record, response):
        statuses.append(response.status_code)
        return real(record, response)

    def finish(done):
        response = real_finish(done)
        statuses.append(response.status_code)
        return response

    monkeypatch.setattr(hook_replay, "replay", replay)
    monkeypatch.setattr(hook_replay, "finish", finish)
    return statuses


@pytest.fixture
def etag(flight):
    from tests.api.conftest import client_for

    return client_for().get(seat_map_url(flight), secure=True)["ETag"]


def more_shapes(flight) -> list[tuple[str, str, dict, bool]]:
    """Shapes that differ from the warm read only in what the hooks read; (name, path,
    request headers, replayed the second time)."""
    url = seat_map_url(flight)
    plain, on = {}, {"secure": True}
    return [
        ("warm", url, on, True),
        ("plain HTTP", url, plain, True),
        ("another host we serve", url, {**on, "HTTP_HOST": "localhost"}, True),
        ("a host with its port", url, {**on, "HTTP_HOST": "127.0.0.1:8000"}, True),
        ("a host we do not serve: 400", url, {**on, "HTTP_HOST": "evil.example"}, False),
        ("German", url, {**on, "HTTP_ACCEPT_LANGUAGE": "de"}, True),
        ("Russian", url, {**on, "HTTP_ACCEPT_LANGUAGE": "ru"}, True),
        ("English again", url, {**on, "HTTP_ACCEPT_LANGUAGE": "en"}, True),
        ("German, plain HTTP", url, {"HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"}, True),
        ("another client", url, {**on, "HTTP_USER_AGENT": "curl/8.0"}, True),
    ]


def proxy_shapes(flight):
    """Behind a TLS proxy (SECURE_PROXY_SSL_HEADER) with the SSL redirect on."""
    url = seat_map_url(flight)
    https, http = {"HTTP_X_FORWARDED_PROTO": "https"}, {"HTTP_X_FORWARDED_PROTO": "http"}
    return [
        ("https at the proxy", url, https, True),
        ("http at the proxy: 301", url, http, False),
        ("no proxy header: 301", url, {}, False),
        ("https at the proxy, German", url, {**https, "HTTP_ACCEPT_LANGUAGE": "de"}, True),
        ("http at the proxy again: 301", url, http, False),
    ]


def twice(settings, observed, replayed, requests):
    """Every shape through the fast path twice, in two rounds (the first records), and once
    the long way: ({name: differences of either round}, [names replayed in round two])."""
    return rounds(settings, observed, replayed, requests, count=2)


def rounds(settings, observed, marked, requests, *, count: int):
    """Every shape through the fast path in `count` rounds and the long way each time:
    ({name: differences of any round}, [names that left a mark in `marked` in the last])."""
    fast = build(settings, fast=True)
    slow = build(settings, fast=False, lean=False)
    found, last = {}, []
    for round_ in range(1, count + 1):
        for name, path, kwargs, _ in requests:
            del observed[:], marked[:]
            a = answer(fast.get(path, **kwargs))
            fast_seen, was_marked = list(observed), bool(marked)
            del observed[:]
            b = answer(slow.get(path, **kwargs))
            found[name] = found.get(name, []) + differences(a, b)
            if fast_seen != observed:
                found[name].append(f"observed {fast_seen} != {observed}")
            if round_ == count and was_marked:
                last.append(name)
    return {n: d for n, d in found.items() if d}, last


def test_every_shape_replayed_answers_as_the_long_way(settings, flight, etag, observed, replayed):
    requests = [*shapes(flight, etag), *more_shapes(flight)]
    found, second = twice(settings, observed, replayed, requests)
    assert found == {}
    short_circuited = {"a host we do not serve", "a host we do not serve: 400"}
    assert second == [n for n, _, _, fast in requests if fast and n not in short_circuited]


def test_behind_a_proxy_the_scheme_is_in_the_key(settings, flight, etag, observed, replayed):
    settings.SECURE_PROXY_SSL_HEADER = PROXY
    settings.SECURE_SSL_REDIRECT = True
    found, second = twice(settings, observed, replayed, proxy_shapes(flight))
    assert found == {}
    assert second == ["https at the proxy", "https at the proxy, German"]


def test_control_a_key_without_the_proxy_header_is_caught(
    settings, flight, etag, observed, replayed, monkeypatch
):
    settings.SECURE_PROXY_SSL_HEADER = PROXY
    settings.SECURE_SSL_REDIRECT = True
    unread(monkeypatch, "HTTP_X_FORWARDED_PROTO")
    found, _ = twice(settings, observed, replayed, proxy_shapes(flight))
    assert "http at the proxy: 301" in found  # the https record replayed: 200, not 301


def test_control_a_key_without_accept_language_is_caught(
    settings, flight, etag, observed, replayed, monkeypatch
):
    unread(monkeypatch, "HTTP_ACCEPT_LANGUAGE")
    found, _ = twice(settings, observed, replayed, more_shapes(flight))
    assert any("Content-Language" in d for d in found["German"])


def test_a_disallowed_user_agent_is_in_the_key_when_there_are_any(
    settings, flight, etag, observed, replayed, monkeypatch
):
    settings.DISALLOWED_USER_AGENTS = [re.compile(r"^BadBot")]
    requests = [
        ("a client", seat_map_url(flight), {"secure": True, "HTTP_USER_AGENT": "Good"}, True),
        ("a refused one: 403", seat_map_url(flight), {"HTTP_USER_AGENT": "BadBot/1"}, False),
    ]
    found, second = twice(settings, observed, replayed, requests)
    assert (found, second) == ({}, ["a client"])
    # Control: the User-Agent left out of the key although the setting names one.
    monkeypatch.setattr(hook_replay, "ignored_reads", lambda: frozenset({"HTTP_USER_AGENT"}))
    requests[1] = ("a refused one: 403", seat_map_url(flight), {"HTTP_USER_AGENT": "Good"}, 0)
    requests.append(("a refused one: 403", seat_map_url(flight), {"HTTP_USER_AGENT": "BadBot"}, 0))
    found, _ = twice(settings, observed, replayed, requests)
    assert "a refused one: 403" in found


def unread(monkeypatch, key: str):
    """A TracedMeta that does not note reads of `key`: a key left out of the record's."""
    real = hook_replay.TracedMeta._note

    def note(self, name):
        if name != key:
            real(self, name)

    monkeypatch.setattr(hook_replay.TracedMeta, "_note", note)


def test_the_threads_language_is_left_as_the_long_way_leaves_it(settings, flight, etag):
    url = seat_map_url(flight)
    left = {}
    for fast in (True, False):
        client = build(settings, fast=fast, lean=fast)
        for language in ("de", "ru", "de", "en", "ru"):
            client.get(url, secure=True, HTTP_ACCEPT_LANGUAGE=language)
            left.setdefault(fast, []).append(translation.get_language())
    assert left[True] == left[False] == ["de", "ru", "de", "en", "ru"]


def test_traced_meta_notes_each_read_and_spoils_on_a_whole_read_or_a_write():
    traced = hook_replay.TracedMeta({"HTTP_HOST": "a", "HTTP_X": "b"})
    assert traced.get("HTTP_HOST") == "a" and "HTTP_NONE" not in traced
    assert traced["HTTP_X"] == "b"
    assert traced.read == {"HTTP_HOST": "a", "HTTP_NONE": hook_replay.ABSENT, "HTTP_X": "b"}
    assert not traced.spoilt  # control
    dict(traced)
    assert traced.spoilt
    written = hook_replay.TracedMeta({})
    written["CSRF_COOKIE"] = "x"
    assert written.spoilt


def test_a_run_that_reads_all_of_meta_is_not_recorded(settings, flight, etag, replayed):
    from django.middleware.common import CommonMiddleware

    real = CommonMiddleware.process_request

    def process_request(self, request):
        dict(request.headers)  # HttpHeaders reads every key
        return real(self, request)

    client = build(settings, fast=True)
    url = seat_map_url(flight)
    client.get(url, secure=True)
    client.get(url, secure=True)
    assert replayed == [200]  # control
    CommonMiddleware.process_request = process_request
    try:
        client = build(settings, fast=True)
        for _ in range(3):
            assert client.get(url, secure=True).status_code == 200
    finally:
        CommonMiddleware.process_request = real
    assert replayed == [200]


def test_shapes_are_bounded_and_forgotten_when_a_setting_changes(
    settings, flight, etag, monkeypatch
):
    monkeypatch.setattr(hook_replay, "MAX_SHAPES", 2)
    client = build(settings, fast=True)
    replay = replay_of(client)
    for host in ("127.0.0.1", "localhost", "testserver", "127.0.0.1"):
        assert client.get(seat_map_url(flight), secure=True, HTTP_HOST=host).status_code == 200
    assert len(replay.records) == 2
    settings.LANGUAGE_CODE = "de"
    assert (replay.records, replay.fields) == ({}, [])


class _OldestGone(dict):
    """Records whose oldest shape another HTTP thread drops between `iter` and `del`."""

    def __delitem__(self, key):
        super().__delitem__(key)
        raise KeyError(key)


def test_a_shape_dropped_by_another_thread_meanwhile_is_no_error(
    settings, flight, etag, monkeypatch
):
    monkeypatch.setattr(hook_replay, "MAX_SHAPES", 1)
    client = build(settings, fast=True)
    replay = replay_of(client)
    url = seat_map_url(flight)
    assert client.get(url, secure=True, HTTP_HOST="127.0.0.1").status_code == 200
    replay.records = _OldestGone(replay.records)
    assert client.get(url, secure=True, HTTP_HOST="localhost").status_code == 200
    assert len(replay.records) == 1
    # Control: the same race without the guard reaches the client as an error.
    replay.records = _OldestGone(replay.records)
    monkeypatch.setattr(hook_replay.contextlib, "suppress", lambda *e: _Raises())
    with pytest.raises(KeyError):
        client.get(url, secure=True, HTTP_HOST="testserver")


class _Raises:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def replay_of(client) -> hook_replay.HookReplay:
    """The client's chain's HookReplay."""
    step = client.handler._middleware_chain
    for _ in range(20):
        layer = getattr(step, "__wrapped__", step)
        if isinstance(layer, cached_reads.CachedReadMiddleware):
            return layer.hooks
        lean = getattr(layer, "lean", None)
        step = lean if lean is not None else layer.get_response
    raise AssertionError("no CachedReadMiddleware in the chain")


def test_a_hook_not_reviewed_turns_the_replay_off(settings, flight, etag, replayed):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.gzip.GZipMiddleware"]
    client = build(settings, fast=True)
    assert replay_of(client).on is False
    for _ in range(2):
        assert client.get(seat_map_url(flight), secure=True).status_code == 200
    assert replayed == []
    settings.MIDDLEWARE = settings.MIDDLEWARE[:-1]
    assert replay_of(build(settings, fast=True)).on is True  # control


def test_a_fast_answer_leaves_no_reference_cycle(flight, etag, monkeypatch):
    """Freed when the answer is, not by the cyclic collector: the fewer allocations a replayed
    read makes, the later the collector runs and the more requests (each holding its cached
    body) would wait for it, which served web RSS shows."""

    def answered_request():
        request = RequestFactory().get(seat_map_url(flight), secure=True)
        request.cached_read = cached_reads.cached_read(request)
        assert cached_reads._answer(request).status_code == 200
        return weakref.ref(request)

    gc.disable()
    try:
        assert answered_request()() is None
        real = SeatMapApi.setup

        def setup(self, request, *args, **kwargs):
            real(self, request, *args, **kwargs)
            self.again = self.get  # control: a second cycle, which the fix does not break

        monkeypatch.setattr(SeatMapApi, "setup", setup)
        assert answered_request()() is not None
    finally:
        gc.enable()
