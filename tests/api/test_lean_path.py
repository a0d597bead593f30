"""The hot endpoints' lean path (issue 26): public reads authenticate only what comes with
credentials, messages are made only when used, and neither loses a defence."""

from __future__ import annotations

import pytest
from django.contrib import messages
from django.contrib.messages.storage.base import BaseStorage
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.functional import SimpleLazyObject
from rest_framework.authentication import SessionAuthentication
from rest_framework.test import APIClient

from config.middleware import LazyMessageMiddleware
from kernel import redis_clients
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def session_reads(monkeypatch):
    calls = []
    real = SessionAuthentication.authenticate

    def authenticate(self, request):
        calls.append(request.path)
        return real(self, request)

    monkeypatch.setattr(SessionAuthentication, "authenticate", authenticate)
    return calls


def test_a_public_read_without_credentials_leaves_the_session_unread(
    customer, flight, session_reads
):
    browser = APIClient()
    browser.force_login(customer)  # the seat-picker page's session cookie
    assert browser.get(f"/api/flights/{flight.pk}/seats").status_code == 200
    assert browser.get(f"/api/flights/{flight.pk}").status_code == 200
    assert session_reads == []


def test_control_a_view_that_needs_the_user_still_reads_the_session(customer, session_reads):
    browser = APIClient()
    browser.force_login(customer)
    assert browser.get("/api/bookings").status_code == 200
    assert session_reads == ["/api/bookings"]


def test_a_bad_token_on_a_public_read_is_still_401(flight):
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = bad.get(f"/api/flights/{flight.pk}/seats")
    assert response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"].startswith("Token")


def test_a_good_token_and_languages_on_a_public_read(customer, flight):
    response = client_for(customer).get(
        f"/api/flights/{flight.pk + 1000}/seats", HTTP_ACCEPT_LANGUAGE="de"
    )
    assert response.status_code == 404
    assert response["Content-Language"] == "de"
    assert response["Content-Type"] == "application/problem+json"
    assert response["X-Request-ID"]


def test_a_406_stays_a_406(flight):
    response = APIClient().get(f"/api/flights/{flight.pk}/seats", HTTP_ACCEPT="text/html")
    assert response.status_code == 406


def _through(middleware_class, view):
    request = RequestFactory().get("/")
    request.session = {}
    middleware = middleware_class(view)
    return request, middleware(request)


def test_messages_are_made_only_when_used():
    request, response = _through(LazyMessageMiddleware, lambda request: HttpResponse("ok"))
    assert isinstance(request._messages, SimpleLazyObject)
    assert request._messages._wrapped.__class__ is object  # `empty`: never made
    assert not response.cookies

    def adds(request):
        messages.info(request, "Saved.")
        return HttpResponse("ok")

    request, response = _through(LazyMessageMiddleware, adds)
    assert isinstance(request._messages._wrapped, BaseStorage)
    # Stored as Django stores them (the cookie, the fallback's first choice).
    assert "messages" in response.cookies


@pytest.fixture
def cache_reads(monkeypatch):
    """The keys of each warm cached read (`redis_clients.cache_get_many`: one MGET on the
    thread's own connection on a single Redis, the cache's `get_many` otherwise)."""
    asked: list[list[str]] = []
    real = redis_clients.cache_get_many

    def get_many(keys, **kwargs):
        asked.append(list(keys))
        return real(keys, **kwargs)

    monkeypatch.setattr(redis_clients, "cache_get_many", get_many)
    return asked


def search_url(flight) -> str:
    from zoneinfo import ZoneInfo

    day = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date()
    return f"/api/flights?from={flight.origin.code}&to={flight.destination.code}&date={day}"


def test_a_search_304_reads_the_etag_and_not_the_body(anon, flight, cache_reads):
    first = anon.get(search_url(flight))
    assert first.status_code == 200 and first.json()[0]["id"] == flight.pk
    cache_reads.clear()
    again = anon.get(search_url(flight), HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again["ETag"] == first["ETag"]
    assert [[k for k in keys if k.endswith(":body")] for keys in cache_reads] == [[]]
    # Control: without If-None-Match the same cached answer is served, body and all.
    cache_reads.clear()
    warm = anon.get(search_url(flight))
    assert warm.status_code == 200 and warm.content == first.content
    assert any(k.endswith(":body") for keys in cache_reads for k in keys)
