"""The HTTP nodes' WSGI handler (config/served.py) answers as Django's own does: the same
status, headers in order, cookies, bytes, access log line and request metric, for every request
shape of the cached reads' proof; only Django's request signals are left out, and only
around a read the fast path answered."""

from __future__ import annotations

import pytest
from django.core import signals
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection
from django.http import HttpResponse, StreamingHttpResponse
from django.test import RequestFactory

from config import served
from tests.api.test_cached_reads import build, shapes
from tests.api.test_lean_chain import REQUEST_ID, SECURITY, differences, seat_map_url

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("keep_the_tests_connection")]


@pytest.fixture
def sent(monkeypatch):
    """Django's request signals as they are sent, in order."""
    seen: list[str] = []

    def started(**kwargs):
        seen.append("started")

    def finished(**kwargs):
        seen.append("finished")

    signals.request_started.connect(started)
    signals.request_finished.connect(finished)
    yield seen
    signals.request_started.disconnect(started)
    signals.request_finished.disconnect(finished)


@pytest.fixture
def etag(flight):
    """The seat map read once through the served handler (warm: the cache and the memo)."""
    answer = served_answer(served.ServedHandler(), seat_map_url(flight), {"secure": True})
    return answer["headers"]["ETag"]


def served_answer(app, path: str, kwargs: dict) -> dict:
    """What a WSGI server sends for `path`: status, headers as handed over, the bytes; the
    response iterated and closed as a server does (granian: a list is written at once)."""
    environ = RequestFactory().get(path, **kwargs).environ
    out = {}

    def start_response(status, headers, exc_info=None):
        out["status"], out["header_list"] = status, headers

    body = app(environ, start_response)
    content = b"".join(body)
    if isinstance(body, list):
        # granian frames a list by a Content-Length it adds where there is none, an iterator
        # in chunks: a list only with the header, so the bytes on the wire are the same.
        assert dict(out["header_list"])["Content-Length"] == str(len(content))
    else:
        body.close()
    header_list = [
        (name, "<made here>" if name == "X-Request-ID" and REQUEST_ID.match(value) else value)
        for name, value in out["header_list"]
    ]
    return {
        "status": out["status"],
        "header_list": header_list,
        "headers": dict(out["header_list"]),
        "body": content,
        "list": isinstance(body, list),
    }


def compare(settings, observed, sent, flight, etag, *, skips=None):
    """Each shape through the served handler (fast path on) and Django's own handler and
    chain (fast path and lean chain off): {name: differences}, and {name: (the signals the
    served handler sent, whether it handed over a bytes list)}."""
    build(settings, fast=True, skips=skips)
    served_app = served.ServedHandler()
    build(settings, fast=False, lean=False)
    django_app = WSGIHandler()
    found, signalled = {}, {}
    for name, path, kwargs, _ in shapes(flight, etag):
        del observed[:], sent[:]
        a = served_answer(served_app, path, kwargs)
        a_seen, signalled[name] = list(observed), (list(sent), a["list"])
        del observed[:], sent[:]
        b = served_answer(django_app, path, kwargs)
        a.pop("headers"), b.pop("headers"), a.pop("list"), b.pop("list")
        found[name] = differences(a, b) + (
            [f"observed {a_seen} != {observed}"] if a_seen != observed else []
        )
        if sent != ["started", "finished"]:
            found[name].append(f"Django's handler sent {sent}")
    return found, signalled


def test_the_served_handler_answers_as_djangos(settings, flight, etag, observed, sent):
    found, signalled = compare(settings, observed, sent, flight, etag)
    assert {name: d for name, d in found.items() if d} == {}
    # Around a read the fast path answered, no signals; the long way sends both, in order.  A
    # fast answer without a Content-Length (the host check's 400, made before CommonMiddleware
    # adds one) goes to the server as Django's response, whose close() ends it as usual.
    expected = {
        name: (([] if listed else ["finished"]) if fast else ["started", "finished"], listed)
        for (name, _, _, fast), listed in zip(
            shapes(flight, etag), (listed for _, listed in signalled.values()), strict=True
        )
    }
    assert signalled == expected
    assert signalled["warm 200"] == signalled["304"] == ([], True)


def test_control_a_fast_path_without_the_security_middleware_is_caught(
    settings, flight, etag, observed, sent
):
    skips = [*settings.LEAN_API_SKIPS, SECURITY]
    found, _ = compare(settings, observed, sent, flight, etag, skips=skips)
    assert any("Strict-Transport-Security" in d for d in found["warm 200"])
    assert found["plain HTTP: SSL redirect"]  # 200 instead of the 301


def test_control_a_long_way_without_its_deferred_start_is_caught(
    settings, flight, etag, observed, sent, monkeypatch
):
    monkeypatch.setattr(served.DeferredStart, "__call__", lambda self: None)
    _, signalled = compare(settings, observed, sent, flight, etag)
    # A long way without its start: caught, where the test above asks for both (its end is
    # still sent: only a fast answer goes without).
    assert signalled["Accept HTML: 406"][0] == ["finished"]
    assert signalled["no such flight or event"][0] == ["finished"]


def test_the_long_way_sends_request_started_before_any_query(settings, flight, etag, sent):
    build(settings, fast=True)
    app = served.ServedHandler()
    events = sent

    def record(execute, sql, params, many, context):
        events.append("query")
        return execute(sql, params, many, context)

    cache.clear()  # a miss: the long way rebuilds the seat map from PostgreSQL
    del events[:]
    with connection.execute_wrapper(record):
        answer = served_answer(app, seat_map_url(flight), {"secure": True})
    assert answer["status"] == "200 OK"
    assert events[0] == "started" and "query" in events and events[-1] == "finished"
    del events[:]
    with connection.execute_wrapper(record):  # control: now a cached read
        assert served_answer(app, seat_map_url(flight), {"secure": True})["status"] == "200 OK"
    assert events == []


def test_other_requests_send_both_signals(settings, flight, etag, sent):
    build(settings, fast=True)
    app = served.ServedHandler()
    url = seat_map_url(flight)
    for path, kwargs in ((url, {"HTTP_COOKIE": "a=b"}), (f"{url}?x=1", {})):
        del sent[:]
        served_answer(app, path, {"secure": True, **kwargs})
        assert sent == ["started", "finished"]
    del sent[:]
    served_answer(app, "/healthz", {"secure": True})
    assert sent == ["started", "finished"]
    del sent[:]
    served_answer(app, url, {"secure": True})
    assert sent == []  # control


def test_without_the_fast_path_first_in_its_chain_nothing_is_deferred(settings, flight, sent):
    build(settings, fast=False)
    assert not served.ServedHandler().defers_start
    build(settings, fast=True, lean=False)  # Django's chain: the fast path third
    assert served.ServedHandler().defers_start
    build(settings, fast=True)
    assert served.ServedHandler().defers_start  # control
    # A middleware the served handler does not know ahead of the fast path: off.
    position = settings.MIDDLEWARE.index("config.cached_reads.CachedReadMiddleware")
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[:position],
        "django.middleware.gzip.GZipMiddleware",
        *settings.MIDDLEWARE[position:],
    ]
    app = served.ServedHandler()
    assert not app.defers_start
    del sent[:]
    served_answer(app, seat_map_url(flight), {"secure": True})
    assert sent == ["started", "finished"]


def test_a_plain_response_is_one_bytes_list_and_closed_a_stream_is_not(sent):
    plain = HttpResponse(b"body", headers={"Content-Length": "4"})
    assert served.as_served(plain) == [b"body"]
    assert plain.closed and sent == ["finished"]
    del sent[:]
    # Without a Content-Length granian would frame a list differently (it adds one; an
    # iterator goes in chunks): left to the server, as Django's handler leaves it.
    unframed = HttpResponse(b"body")
    assert served.as_served(unframed) is unframed
    assert sent == [] and not unframed.closed
    stream = StreamingHttpResponse(iter([b"a", b"b"]))
    assert served.as_served(stream) is stream
    assert sent == [] and not stream.closed  # the server iterates and closes it
