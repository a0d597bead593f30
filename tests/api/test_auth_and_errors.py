from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from bookings.errors import (
    BookingNotFound,
    HoldExpired,
    SaleClosed,
    SeatUnavailable,
    SoldOut,
)
from bookings.models import Booking
from config.api.exceptions import problem_exception_handler
from flights.models import Seat
from kernel.errors import DomainError, InvalidRequest, TooBusy
from kernel.web.throttles import HoldsThrottle
from tests.api.conftest import client_for, problem
from tests.concurrency import locked_elsewhere, run_concurrently
from tests.factories import FlightFactory, UserFactory
from tests.pgbouncer import lock_timeout_for_new_sessions

pytestmark = pytest.mark.django_db


def hold_body(flight, seats=("12A",)):
    return {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        "seats": list(seats),
        "exitRowConfirmed": True,
    }


# --- auth --------------------------------------------------------------------------------------


def test_token_for_username_and_password_then_token_auth_works(anon, flight):
    user = UserFactory(username="ana")
    response = anon.post(
        "/api/auth/token", {"username": "ana", "password": "correct-horse-battery"}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    created = client.post("/api/bookings", hold_body(flight), format="json")
    assert created.status_code == 201
    assert Booking.objects.get(pk=created.json()["bookingId"]).customer == user
    # Asking again gives the same token.
    again = anon.post(
        "/api/auth/token", {"username": "ana", "password": "correct-horse-battery"}, format="json"
    )
    assert again.json()["token"] == token


@pytest.mark.parametrize(
    "credentials",
    [{"username": "ana", "password": "wrong"}, {"username": "nobody", "password": "x"}],
)
def test_wrong_credentials_are_401(anon, credentials):
    UserFactory(username="ana")
    response = anon.post("/api/auth/token", credentials, format="json")
    assert problem(response, 401)["type"].endswith("/authentication-failed")
    assert response["WWW-Authenticate"] == "Token"


def test_inactive_user_gets_no_token(anon):
    UserFactory(username="gone", is_active=False)
    response = anon.post(
        "/api/auth/token", {"username": "gone", "password": "correct-horse-battery"}, format="json"
    )
    problem(response, 401)


def test_token_request_missing_fields_is_400(anon):
    data = problem(anon.post("/api/auth/token", {"username": "ana"}, format="json"), 400)
    assert [p["name"] for p in data["invalidParams"]] == ["password"]


def test_session_auth_requires_csrf_for_writes(customer, flight):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(customer)
    assert client.get("/api/bookings").status_code == 200  # safe methods need no token
    refused = client.post("/api/bookings", hold_body(flight), format="json")
    assert "CSRF" in problem(refused, 403)["detail"]
    assert not Booking.objects.exists()

    secret = "a" * 32
    client.cookies["csrftoken"] = secret
    accepted = client.post(
        "/api/bookings", hold_body(flight), format="json", HTTP_X_CSRFTOKEN=secret
    )
    assert accepted.status_code == 201


# --- bad input never becomes a 500 -------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b'{"flightId": 1,}',
        b"\xff\xfe not utf-8",
        b"[" * 100_000,
        b'{"flightId": ' + b"9" * 5000 + b"}",
    ],
    ids=["truncated", "trailing-comma", "not-utf8", "deeply-nested", "5000-digit-int"],
)
def test_malformed_json_is_400(api, raw):
    response = api.post("/api/bookings", data=raw, content_type="application/json")
    assert problem(response, 400)["type"].endswith("/malformed-request")


@pytest.mark.parametrize(
    "raw",
    [b"[1, 2]", b'"hello"', b"null", b"42", b'{"flightId": NaN, "fareClass": "ECONOMY"}'],
)
def test_json_of_the_wrong_shape_is_400(api, raw):
    response = api.post("/api/bookings", data=raw, content_type="application/json")
    problem(response, 400)


def test_other_media_types_are_415(api, flight):
    response = api.post("/api/bookings", data="flightId=1", content_type="text/plain")
    assert problem(response, 415)["type"].endswith("/unsupported-media-type")


def test_huge_body_is_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    raw = b'{"passengerNames": ["' + b"x" * 2000 + b'"]}'
    problem(api.post("/api/bookings", data=raw, content_type="application/json"), 413)


def test_wrong_method_is_405(api):
    problem(api.put("/api/bookings", {}, format="json"), 405)


def test_unknown_api_url_is_problem_404(api):
    data = problem(api.get("/api/no-such-thing"), 404)
    assert data["type"].endswith("/not-found")


def test_pages_keep_html_404(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    "error",
    [
        InvalidRequest("bad", field="seats"),
        BookingNotFound(),
        SeatUnavailable(["12A"]),
        SoldOut("ECONOMY"),
        SaleClosed("gone"),
        HoldExpired(),
        TooBusy(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_domain_error_answers_with_its_own_status(error):
    response = problem_exception_handler(error, {})
    assert response.status_code == error.status
    assert response.content_type == "application/problem+json"
    assert response.data["type"] == f"https://seatkeeper.dev/problems/{error.code}"
    assert response.data["detail"] == error.detail
    for key, value in error.extra.items():
        assert response.data[key] == value
    if error.status == 503:
        assert response["Retry-After"] == "1"


def test_a_new_domain_error_needs_no_handler_change():
    class Teapot(DomainError):
        status, code, title = 418, "teapot", "I'm a teapot"

    response = problem_exception_handler(Teapot("short and stout", spout=1), {})
    assert (response.status_code, response.data["spout"]) == (418, 1)


@pytest.mark.django_db(transaction=True)
def test_lock_timeout_is_503_with_retry_after():
    """A real lock: another connection holds seat 12A, our hold gives up after lock_timeout."""
    customer = UserFactory()
    flight = FlightFactory()
    seat = Seat.objects.select_for_update().filter(sale=flight.sale, seat_no="12A")
    with locked_elsewhere(seat.get), lock_timeout_for_new_sessions(200):
        response = client_for(customer).post("/api/bookings", hold_body(flight), format="json")
    data = problem(response, 503)
    assert data["type"].endswith("/too-busy") and response["Retry-After"] == "1"
    assert not Booking.objects.exists()


# --- throttles ---------------------------------------------------------------------------------


@pytest.fixture
def tight_holds(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"holds": "2/min", "payments": "2/min", "auth": "2/min"},
    }


def test_holds_are_throttled_per_user(tight_holds, customer, other_customer, flight):
    api = client_for(customer)
    for seat in ("20A", "20B"):
        assert (
            api.post("/api/bookings", hold_body(flight, [seat]), format="json").status_code == 201
        )
    response = api.post("/api/bookings", hold_body(flight, ["20C"]), format="json")
    data = problem(response, 429)
    assert 1 <= int(response["Retry-After"]) <= 60 and data["retryAfter"] == int(
        response["Retry-After"]
    )
    assert Booking.objects.count() == 2
    # Reads are not throttled, and another user has their own budget.
    assert api.get("/api/bookings").status_code == 200
    other = client_for(other_customer).post(
        "/api/bookings", hold_body(flight, ["20C"]), format="json"
    )
    assert other.status_code == 201


def test_token_requests_are_throttled(tight_holds, anon):
    for _ in range(2):
        problem(
            anon.post("/api/auth/token", {"username": "x", "password": "y"}, format="json"), 401
        )
    problem(anon.post("/api/auth/token", {"username": "x", "password": "y"}, format="json"), 429)


def test_throttle_counts_atomically_across_threads(tight_holds, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"holds": "5/min"},
    }
    request = SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=777), META={})
    outcomes = run_concurrently([lambda: HoldsThrottle().allow_request(request, None)] * 30)
    assert outcomes.errors == []
    assert sorted(outcomes.results) == [False] * 25 + [True] * 5
