"""Issue 24, item 6: every header and cookie the app reads, sent non-ASCII, overlong and
empty, against the main API endpoints and pages: never a 5xx.

The headers and cookies are the ones the code reads (grep for META, HTTP_, COOKIES and
headers across the apps), plus those Django and our libraries read for us (Host, Origin,
Referer, X-CSRFToken, User-Agent for django-axes, Accept for DRF).  Each is replaced, one
at a time, by each hostile value, on a request that is otherwise valid (a logged-in
customer with a live admission to the protected event), so it gets as far into the code as
it can.  `REMOTE_ADDR` comes from the server, not the client, and is not fuzzed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bookings.customer_holds import hold_seats
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory
from tests.waitroom.room_helpers import no_limits, room_redis  # noqa: F401  (fixture)
from waitroom.gate import cookie_name
from waitroom.staff import open_waiting_room
from waitroom.tokens import issue_token

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = [
    "",
    # What a server hands over for UTF-8 bytes it read (WSGI decodes headers as latin-1).
    "é💺".encode().decode("latin-1"),
    # Non-ASCII as text, in the shape of a token (the 500 of issue 24).
    "wr1.1.1.9999999999.é",
    "A" * 10_000 + "é",
]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # formatted with flight, event, room, booking
    body: dict | None = None
    form: bool = False  # a page form (urlencoded) rather than JSON


E = {
    # API
    "flight seats": Endpoint("get", "/api/flights/{flight}/seats"),
    "event": Endpoint("get", "/api/events/{event}"),
    "event seats": Endpoint("get", "/api/events/{event}/seats"),
    "bookings": Endpoint("get", "/api/bookings"),
    "hold": Endpoint(
        "post", "/api/bookings", {"eventId": "{event}", "category": "A", "seats": ["1-1-1"]}
    ),
    "pay": Endpoint("post", "/api/bookings/{booking}/payments", {}),
    "queue": Endpoint("post", "/api/waiting-rooms/{room}/queue"),
    "event waitlist": Endpoint(
        "post", "/api/events/{event}/waitlist", {"category": "A", "partySize": 1}
    ),
    "webhook": Endpoint("post", "/api/payments/webhook", {"id": "evt_1", "type": "x"}),
    "stripe webhook": Endpoint("post", "/api/payments/webhook/stripe", {"id": "evt_1"}),
    "token": Endpoint("post", "/api/auth/token", {"username": "fan", "password": "wrong"}),
    "metrics": Endpoint("get", "/metrics"),
    "healthz": Endpoint("get", "/healthz"),
    # pages
    "search page": Endpoint("get", "/"),
    "event page": Endpoint("get", "/events/{event}/"),
    "event hold form": Endpoint(
        "post", "/events/{event}/hold/", {"seats": "1-1-2", "name": "Ann"}, form=True
    ),
    "my bookings page": Endpoint("get", "/bookings/"),
    "queue page": Endpoint("get", "/waiting-room/{room}/"),
    "login form": Endpoint(
        "post", "/accounts/login/", {"username": "fan", "password": "wrong"}, form=True
    ),
    "language form": Endpoint("post", "/i18n/setlang/", {"language": "de", "next": "/"}, True),
}

# Every header goes to a page and an API endpoint (the middleware reads many of them on
# every request) and to the endpoints whose code reads it.
EVERYWHERE = ["search page", "bookings"]
HEADERS = {
    "HTTP_IDEMPOTENCY_KEY": ["hold", "pay"],
    "HTTP_AUTHORIZATION": ["metrics", "hold"],
    "HTTP_X_FORWARDED_FOR": ["queue", "token", "metrics", "login form"],
    "HTTP_X_FORWARDED_PROTO": ["event page"],
    "HTTP_ACCEPT_LANGUAGE": ["event", "event page"],
    "HTTP_IF_NONE_MATCH": ["flight seats", "event seats"],
    "HTTP_X_WAITING_ROOM_TOKEN": ["hold", "event page", "event hold form", "event waitlist"],
    "HTTP_SEATKEEPER_SIGNATURE": ["webhook"],  # the sandbox gateway's webhooks
    "HTTP_STRIPE_SIGNATURE": ["webhook", "stripe webhook"],
    "HTTP_X_REQUEST_ID": ["healthz"],
    "HTTP_HOST": ["event page", "hold"],
    "HTTP_ORIGIN": ["event hold form", "hold"],
    "HTTP_REFERER": ["event hold form", "language form"],
    "HTTP_X_CSRFTOKEN": ["event hold form", "login form"],
    "HTTP_USER_AGENT": ["login form", "token"],
    "HTTP_ACCEPT": ["event", "event seats"],
    "CONTENT_TYPE": ["hold", "login form"],
}
COOKIES = {
    "sessionid": ["my bookings page", "event page", "hold"],
    "csrftoken": ["event hold form", "language form"],
    "django_language": ["event", "event page"],
    "messages": ["my bookings page"],
    "waiting_room": ["event page", "event hold form", "hold", "queue page"],
}


@pytest.fixture
def world(settings, room_redis):  # noqa: F811
    """A customer logged in both ways (session and token), an unprotected flight with their
    hold, a protected event they were let into, and knobs that let requests get deep."""
    no_limits(settings)
    settings.NUM_PROXIES = 1  # so X-Forwarded-For is parsed, not ignored
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {k: "100000/min" for k in ("holds", "payments", "auth")},
    }
    customer = UserFactory(username="fan")
    flight = FlightFactory()
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12A"],
        passenger_names=["Ann"],
    )
    event = EventFactory()
    room = open_waiting_room(
        sale_id=event.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    login = Client()
    login.force_login(customer)
    cookies = {
        "sessionid": login.cookies["sessionid"].value,
        "csrftoken": "a" * 32,
        "django_language": "en",
        "messages": "",
        cookie_name(room.pk): issue_token(
            room_id=room.pk,
            customer_id=customer.pk,
            expires_at=timezone.now() + timedelta(minutes=10),
        ),
    }
    names = {"flight": flight.pk, "event": event.pk, "room": room.pk, "booking": booking.pk}
    headers = {
        "HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=customer).key}",
        "HTTP_HOST": "testserver",
        "HTTP_ACCEPT_LANGUAGE": "en",
        "HTTP_X_CSRFTOKEN": cookies["csrftoken"],
    }
    return names, cookies, headers


def _fill(value, names: dict):
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, list):
        return [_fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _send(endpoint: Endpoint, names: dict, cookies: dict, meta: dict):
    # CSRF checked as in production, so Origin, Referer and the token are really read.
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    meta = {"HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in cookies.items()), **meta}
    path = _fill(endpoint.path, names)
    if endpoint.method == "get":
        return client.get(path, **meta)
    body = _fill(endpoint.body or {}, names)
    if endpoint.form:
        return client.post(path, body, **meta)
    content_type = meta.pop("CONTENT_TYPE", "application/json")
    return client.post(path, json.dumps(body), content_type=content_type, **meta)


def _run(world, cases) -> list[str]:
    """Send every (label, endpoint names, cookies, headers); the answers that were a 5xx."""
    names, _cookies, _headers = world
    failed = []
    for label, endpoints, cookie_jar, meta in cases:
        for key in endpoints:
            response = _send(E[key], names, cookie_jar, meta)
            if response.status_code >= 500:
                error = getattr(response, "exc_info", None) or (None, None)
                failed.append(f"{key} with {label}: {response.status_code} {error[1]!r}")
    return failed


def test_no_header_the_app_reads_makes_a_5xx(world):
    _names, cookies, headers = world
    cases = [
        (f"{header}={value[:24]!r}", EVERYWHERE + readers, cookies, {**headers, header: value})
        for header, readers in HEADERS.items()
        for value in HOSTILE
    ]
    assert _run(world, cases) == []


def test_no_cookie_the_app_reads_makes_a_5xx(world):
    names, cookies, headers = world
    anonymous = {k: v for k, v in headers.items() if k != "HTTP_AUTHORIZATION"}
    cases = []
    for name, readers in COOKIES.items():
        cookie = cookie_name(names["room"]) if name == "waiting_room" else name
        for value in HOSTILE:
            jar = {**cookies, cookie: value}
            cases.append((f"cookie {cookie}={value[:24]!r}", readers, jar, headers))
            # Anonymous as well (the issue's event page): no session, no API token.
            if cookie != "sessionid":
                jar = {k: v for k, v in jar.items() if k != "sessionid"}
            cases.append((f"cookie {cookie}={value[:24]!r}, anonymous", readers, jar, anonymous))
    assert _run(world, cases) == []
