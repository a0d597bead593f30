import uuid

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.core import signals
from django.db import close_old_connections
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bookings.models import Booking
from config import middleware as config_middleware
from config.api import tokens as api_tokens
from kernel.web import throttles
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    """A key prefix of its own per test: seat maps, searches and throttle counters in Redis
    never leak between tests or runs (where ids restart), and nothing else in the same Redis
    database is flushed.  Keys left behind expire within their short TTLs."""
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }


@pytest.fixture(autouse=True)
def generous_throttles(settings):
    """Throttles out of the way, except in the tests that tighten them on purpose."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            "holds": "10000/min",
            "payments": "10000/min",
            "auth": "10000/min",
        },
    }


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def anon():
    return APIClient()


@pytest.fixture
def api(customer):
    return client_for(customer)


@pytest.fixture
def book_on_behalf_permission(db):
    # Until Booking.Meta.permissions declares it, the permission row is made here.
    permission, _ = Permission.objects.get_or_create(
        codename="book_on_behalf",
        content_type=ContentType.objects.get_for_model(Booking),
        defaults={"name": "Can book on behalf of customers"},
    )
    return permission


@pytest.fixture
def agent(book_on_behalf_permission):
    user = UserFactory(username="agent")
    user.user_permissions.add(book_on_behalf_permission)
    return user


def problem(response, status: int) -> dict:
    """Assert `response` is an RFC 9457 problem with `status`; return its body."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/problem+json"), response["Content-Type"]
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["type"]
    return body


@pytest.fixture
def sandbox_payments(settings):
    """Real payments through the sandbox gateway: Celery tasks (refunds, the outbox relay) run
    eagerly after commit, and the sandbox sends no webhooks.  Paying needs a transactional
    test: the service refuses to call a gateway inside a transaction."""
    from config.celery import app as celery_app

    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "WEBHOOK_SECRET": "whsec_api_tests",
        "DELIVER_WEBHOOKS": False,
    }
    previous = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = True, False
    yield settings
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = previous


GOOD_CARD = "4242424242424242"
DECLINED_CARD = "4000000000000002"


def pay(client, booking_id: int, key: str | None = "key-1", **body):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(f"/api/bookings/{booking_id}/payments", body, format="json", **headers)


@pytest.fixture
def observed(monkeypatch):
    """Every request metric and access log line, in order."""
    seen: list[tuple] = []
    real = config_middleware.metrics.observe_request

    def observe_request(*, route, method, status, seconds):
        seen.append(("metric", route, method, status))
        return real(route=route, method=method, status=status, seconds=seconds)

    monkeypatch.setattr(config_middleware.metrics, "observe_request", observe_request)

    def info(msg, *args, extra=None, **kwargs):
        fields = {k: v for k, v in (extra or {}).items() if k != "duration_ms"}
        seen.append(("log", msg % args, tuple(sorted(fields.items()))))

    monkeypatch.setattr(config_middleware.access_log, "info", info)
    return seen


@pytest.fixture
def keep_the_tests_connection():
    """As Django's test client does for requests sent some other way: closing "old"
    connections around each request would close the test's transaction under our feet."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


class ThrottleClock:
    """The throttles' clock (the token check's and the throttle's), settable by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def pinned_window(monkeypatch) -> ThrottleClock:
    """The throttles' clock held in the middle of one minute.  Their windows are fixed
    (`int(now // period)`): a minute boundary between the API's holds and the page's hold
    opens a fresh budget and lets the page through (the flake seen under load, when the
    requests took long enough for a boundary to fall between them; reproduced in
    test_hold_round_trips.py).  Only the throttles' clock is pinned; Redis, the database and
    the page keep real time."""
    clock = ThrottleClock(1_800_000_030.0)  # 30 s into a minute
    assert clock.time() % 60 == 30
    monkeypatch.setattr(throttles, "time", clock)
    monkeypatch.setattr(api_tokens, "time", clock)
    return clock
