"""The lean middleware chain for cookie-less API requests (config/lean_chain.py, issue 26)
answers exactly as Django's whole chain does: the same status, headers, cookies, bytes, access
log line and request metric, request by request; pages and requests with cookies take
Django's chain."""

from __future__ import annotations

import json
import re
from zoneinfo import ZoneInfo

import pytest
from django.http import HttpResponse
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.deprecation import MiddlewareMixin
from rest_framework.test import APIClient
from rest_framework.views import APIView

from config import lean_chain
from tests.api.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SECURITY = "django.middleware.security.SecurityMiddleware"


def _loaded(client: APIClient) -> APIClient:
    client.handler.load_middleware()  # now, under the settings of this moment
    return client


@pytest.fixture
def merged_calls(monkeypatch):
    """How many requests went through a merged layer, which only the lean chain has."""
    calls = []
    real = lean_chain.MergedHooks.__call__

    def call(self, request):
        calls.append(request.path)
        return real(self, request)

    monkeypatch.setattr(lean_chain.MergedHooks, "__call__", call)
    return calls


def build(settings, *, user=None, lean: bool, skips: list[str] | None = None, login=False):
    settings.LEAN_API_REQUESTS = lean
    settings.CACHED_READ_FAST_PATH = False  # the chain itself (tests/api/test_cached_reads.py)
    if skips is not None:
        settings.LEAN_API_SKIPS = skips
    client = client_for(user if not login else None)
    if login:
        client.force_login(user)
    return _loaded(client)


REQUEST_ID = re.compile(r"^[0-9a-f]{32}$")
# What differs between two winning holds whatever the chain: their ids and their clocks.
PER_HOLD = [
    (re.compile(rb'"(bookingId|customerId)":\d+'), rb'"\1":N'),
    (re.compile(rb"/api/bookings/\d+"), rb"/api/bookings/N"),
    (re.compile(rb'"(expiresAt|createdAt)":"[^"]+"'), rb'"\1":"T"'),
]


def answer(response, *, per_hold=False) -> dict:
    headers = []
    for name, value in response.headers.items():
        if name in ("X-Request-ID", "Location") and per_hold:
            value = re.sub(r"\d+", "N", value) if name == "Location" else "<id>"
        elif name == "X-Request-ID" and REQUEST_ID.match(value):
            value = "<made here>"
        elif name == "Date":
            value = "<date>"
        headers.append((name, value))
    body = response.content if not getattr(response, "streaming", False) else b"<stream>"
    if per_hold:
        for pattern, replacement in PER_HOLD:
            body = pattern.sub(replacement, body)
    cookies = sorted(m.output() for m in response.cookies.values())
    if "csrftoken" in response.cookies:  # a new CSRF secret (the API docs page): random
        cookies = [re.sub(r"csrftoken=\w+;", "csrftoken=<secret>;", c) for c in cookies]
        body = re.sub(rb'"[A-Za-z0-9]{64}"', b'"<masked token>"', body)
    # Each browser logs in to its own session: the key and its expiry are its own.
    cookies = [re.sub(r"sessionid=\w+; expires=[^;]+;", "sessionid=<key>;", c) for c in cookies]
    return {
        "status": response.status_code,
        "headers": headers,
        "cookies": cookies,
        "body": body,
    }


def differences(a: dict, b: dict) -> list[str]:
    return [f"{k}: {a[k]!r} != {b[k]!r}" for k in a if a[k] != b[k]]


def seat_map_url(flight) -> str:
    return f"/api/flights/{flight.pk}/seats"


def search_url(flight) -> str:
    day = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date()
    return f"/api/flights?from={flight.origin.code}&to={flight.destination.code}&date={day}"


def hold_body(flight, seat: str | None = None) -> str:
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "passengerNames": ["Ada Lovelace"]}
    if seat:
        return json.dumps({**body, "seats": [seat], "exitRowConfirmed": True})
    return json.dumps({**body, "passengers": 1})


def requests_for(flight, etag: str) -> list[tuple[str, str, dict]]:
    """(name, method and path, keyword arguments) of each request both chains answer."""
    json_body = {"content_type": "application/json", "secure": True}
    return [
        ("seat map 200", f"GET {seat_map_url(flight)}", {"secure": True}),
        (
            "seat map 304",
            f"GET {seat_map_url(flight)}",
            {"secure": True, "HTTP_IF_NONE_MATCH": etag},
        ),
        ("seat map HEAD", f"HEAD {seat_map_url(flight)}", {"secure": True}),
        ("search", f"GET {search_url(flight)}", {"secure": True}),
        (
            "search in German",
            f"GET {search_url(flight)}",
            {"secure": True, "HTTP_ACCEPT_LANGUAGE": "de"},
        ),
        (
            "404 in German",
            "GET /api/flights/999999/seats",
            {"secure": True, "HTTP_ACCEPT_LANGUAGE": "de-DE,de;q=0.9"},
        ),
        ("no such URL", "GET /api/nothing-here", {"secure": True}),
        ("slash appended?", f"GET {seat_map_url(flight)}/", {"secure": True}),
        (
            "hold 409 taken seat",
            "POST /api/bookings",
            {"data": hold_body(flight, "20C"), **json_body},
        ),
        ("hold 400 bad JSON", "POST /api/bookings", {"data": "{not json", **json_body}),
        (
            "hold 400 invalid",
            "POST /api/bookings",
            {"data": json.dumps({"flightId": "x"}), **json_body},
        ),
        ("hold 405", "PUT /api/bookings", {"data": "{}", **json_body}),
        ("406", f"GET {seat_map_url(flight)}", {"secure": True, "HTTP_ACCEPT": "text/html"}),
        ("plain HTTP: SSL redirect", f"GET {seat_map_url(flight)}", {}),
        (
            "a host we do not serve",
            f"GET {seat_map_url(flight)}",
            {"secure": True, "HTTP_HOST": "evil.example"},
        ),
        (
            "the caller's request id",
            "GET /api/nothing",
            {"secure": True, "HTTP_X_REQUEST_ID": "abc-123"},
        ),
        ("schema", "GET /api/schema/", {"secure": True}),
        # Last: it sets a CSRF cookie, which sends this client's next requests the long way.
        ("API docs page", "GET /api/docs/", {"secure": True}),
    ]


def send(client, method_path: str, kwargs: dict):
    method, path = method_path.split(" ", 1)
    return getattr(client, method.lower())(path, **kwargs)


@pytest.fixture
def world(customer, flight, settings):
    """The seat 20C held by someone else, and the seat map's ETag."""
    settings.LANGUAGE_CODE = "en"
    taker = client_for(UserFactory())
    data = hold_body(flight, "20C")
    taken = taker.post("/api/bookings", data=data, content_type="application/json", secure=True)
    assert taken.status_code == 201, taken.content
    etag = client_for(customer).get(seat_map_url(flight), secure=True)["ETag"]
    return flight, etag


def compare(settings, observed, *, user, flight, etag, skips=None) -> dict[str, list[str]]:
    full = build(settings, user=user, lean=False)
    anon_full = build(settings, lean=False)
    lean = build(settings, user=user, lean=True, skips=skips)
    anon_lean = build(settings, lean=True, skips=skips)
    found: dict[str, list[str]] = {}
    cases = [(n, mp, kw, True) for n, mp, kw in requests_for(flight, etag)]
    cases += [
        (
            "401 without a token",
            "POST /api/bookings",
            {"data": hold_body(flight), "content_type": "application/json", "secure": True},
            False,
        )
    ]
    cases += [
        (
            "bad token",
            f"GET {seat_map_url(flight)}",
            {"secure": True, "HTTP_AUTHORIZATION": "Token nope"},
            False,
        )
    ]
    cases += [("anonymous seat map", f"GET {seat_map_url(flight)}", {"secure": True}, False)]
    for name, method_path, kwargs, with_token in cases:
        del observed[:]
        a = answer(send(lean if with_token else anon_lean, method_path, kwargs))
        lean_seen = list(observed)
        del observed[:]
        b = answer(send(full if with_token else anon_full, method_path, kwargs))
        found[name] = differences(a, b) + (
            [f"observed {lean_seen} != {observed}"] if lean_seen != observed else []
        )
    # The winning hold: two customers, so ids and clocks are masked (and only those).
    winner_lean = build(settings, user=UserFactory(), lean=True, skips=skips)
    winner_full = build(settings, user=UserFactory(), lean=False)
    wins = [
        answer(
            c.post(
                "/api/bookings",
                data=hold_body(flight),
                content_type="application/json",
                secure=True,
            ),
            per_hold=True,
        )
        for c in (winner_lean, winner_full)
    ]
    assert wins[0]["status"] == 201, wins[0]
    found["hold 201"] = differences(*wins)
    return found


def test_the_lean_chain_answers_as_the_whole_chain(
    settings, customer, world, observed, merged_calls
):
    flight, etag = world
    found = compare(settings, observed, user=customer, flight=flight, etag=etag)
    assert {name: d for name, d in found.items() if d} == {}
    # It was the lean chain that answered: every cookie-less API request took it once.
    assert len(merged_calls) == len(found), " ".join(merged_calls)


def test_control_a_lean_chain_without_the_security_middleware_is_caught(
    settings, customer, world, observed
):
    flight, etag = world
    skips = [*settings.LEAN_API_SKIPS, SECURITY]
    found = compare(settings, observed, user=customer, flight=flight, etag=etag, skips=skips)
    assert any("Strict-Transport-Security" in d for d in found["seat map 200"])
    assert any("X-Content-Type-Options" in d for d in found["hold 201"])
    assert found["plain HTTP: SSL redirect"]  # 200 instead of the 301


def test_requests_with_a_cookie_and_pages_take_djangos_chain(
    settings, customer, flight, merged_calls
):
    browser = build(settings, user=customer, lean=True, login=True)  # the session cookie
    assert browser.get("/api/bookings", secure=True).status_code == 200
    assert browser.get(seat_map_url(flight), secure=True).status_code == 200
    anonymous = build(settings, lean=True)
    anonymous.cookies["csrftoken"] = "x" * 32  # any cookie at all
    assert anonymous.get(seat_map_url(flight), secure=True).status_code == 200
    del anonymous.cookies["csrftoken"]
    assert build(settings, lean=True).get("/", secure=True).status_code == 200  # a page
    assert merged_calls == []
    assert anonymous.get(seat_map_url(flight), secure=True).status_code == 200
    assert merged_calls == [seat_map_url(flight)]  # control: without the cookie, lean


def test_a_session_cookie_answer_is_the_same_with_the_lean_chain_on_or_off(
    settings, customer, flight
):
    answers = []
    for lean in (True, False):
        browser = build(settings, user=customer, lean=lean, login=True)
        answers.append(answer(browser.get("/api/bookings", secure=True)))
    assert differences(*answers) == []


# --- why each skipped middleware does nothing for such a request ------------------------------


def _routes(resolver, prefix=""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _routes(entry, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry.callback


def test_every_api_route_is_a_drf_view_so_none_uses_djangos_messages():
    api = [(route, cb) for route, cb in _routes(get_resolver()) if route.startswith("api/")]
    assert len(api) > 20
    not_drf = [r for r, cb in api if not issubclass(getattr(cb, "cls", object), APIView)]
    assert not_drf == []


def test_no_static_file_is_served_under_the_api(settings):
    from config.static import AsyncWhiteNoiseMiddleware

    whitenoise = AsyncWhiteNoiseMiddleware(lambda request: HttpResponse())
    assert whitenoise.files  # control: it does serve files, elsewhere
    assert not [url for url in whitenoise.files if url.startswith(lean_chain.API_PREFIX)]
    assert not getattr(settings, "WHITENOISE_ROOT", None)
    assert not ("/" + settings.STATIC_URL.lstrip("/")).startswith(lean_chain.API_PREFIX)


def test_the_lean_chain_is_built_under_the_projects_settings(settings):
    client = build(settings, lean=True)
    fork = client.handler._middleware_chain.__wrapped__
    assert isinstance(fork, lean_chain.LeanApiMiddleware)
    assert fork.lean is not None
    assert build(settings, lean=False).handler._middleware_chain.__wrapped__.lean is None


# --- the merged layer does what Django's nesting of the same middlewares does ---------------


class Recorder(MiddlewareMixin):
    """A toy hook-style middleware: records its hooks, answers or raises where told."""

    log: list[str] = []
    plan: dict[str, str] = {}

    def process_request(self, request):
        name = type(self).__name__
        self.log.append(f"{name}.request")
        todo = self.plan.get(f"{name}.request")
        if todo == "answer":
            return HttpResponse(f"from {name}", status=202)
        if todo == "raise":
            raise PermissionError(name)  # a 500 by Django's conversion
        return None

    def process_response(self, request, response):
        name = type(self).__name__
        self.log.append(f"{name}.response")
        if self.plan.get(f"{name}.response") == "raise":
            raise ValueError(name)
        response[f"X-{name}"] = str(response.status_code)
        return response


class One(Recorder):
    pass


class Two(MiddlewareMixin):  # no process_response
    def process_request(self, request):
        Recorder.log.append("Two.request")
        if Recorder.plan.get("Two.request") == "answer":
            return HttpResponse("from Two", status=203)
        return None


class Three(Recorder):
    pass


PLANS = [
    {},
    {"One.request": "answer"},
    {"Two.request": "answer"},
    {"Three.request": "raise"},
    {"One.request": "raise"},
    {"Three.response": "raise"},
    {"One.response": "raise"},
    {"Three.request": "answer", "One.response": "raise"},
]


@pytest.mark.parametrize(
    "plan", PLANS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "none"
)
def test_merged_hooks_match_djangos_nesting(plan, rf):
    from django.core.handlers.exception import convert_exception_to_response

    def view(request):
        Recorder.log.append("view")
        return HttpResponse("view")

    def nested():
        chain = convert_exception_to_response(view)
        for cls in (Three, Two, One):
            chain = convert_exception_to_response(cls(chain))
        return chain

    def merged():
        inner = convert_exception_to_response(view)
        return convert_exception_to_response(
            lean_chain.MergedHooks([cls(inner) for cls in (One, Two, Three)], inner)
        )

    results = []
    for build_chain in (nested, merged):
        Recorder.log, Recorder.plan = [], plan
        response = build_chain()(rf.get("/api/x"))
        results.append(
            (Recorder.log, response.status_code, sorted(response.items()), response.content)
        )
    assert results[0] == results[1]


def test_runs_group_only_neighbouring_hook_style_middlewares():
    class Plain:
        def __init__(self, get_response):
            self.get_response = get_response

        def __call__(self, request):
            return self.get_response(request)

    assert lean_chain._runs([One, Two, Plain, Three, Plain, Plain]) == [
        [One, Two],
        [Plain],
        [Three],
        [Plain],
        [Plain],
    ]


def test_under_asgi_every_request_takes_djangos_chain(settings, flight, merged_calls):
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    answers = []
    settings.CACHED_READ_FAST_PATH = False  # its own test: tests/api/test_cached_reads.py
    for lean in (True, False):
        settings.LEAN_API_REQUESTS = lean
        client = AsyncClient()
        answers.append(answer(async_to_sync(client.get)(seat_map_url(flight), secure=True)))
    assert answers[0]["status"] == 200
    assert differences(*answers) == []
    assert merged_calls == []  # the handler's async end is not searched through
