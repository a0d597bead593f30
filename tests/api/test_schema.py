"""The OpenAPI schema describes the API, and the API keeps to it under generated input."""

from datetime import timedelta

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from bookings.services import hold_seats
from kernel.outbox import relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/api/auth/token", "post"),
    ("/api/flights", "get"),
    ("/api/flights/{flight_id}", "get"),
    ("/api/flights/{flight_id}/seats", "get"),
    ("/api/bookings", "get"),
    ("/api/bookings", "post"),
    ("/api/bookings/{booking_id}", "get"),
    ("/api/bookings/{booking_id}", "delete"),
    ("/api/bookings/{booking_id}/payments", "post"),
    ("/api/bookings/{booking_id}/refund-quote", "get"),
    ("/api/bookings/{booking_id}/tickets", "get"),
    ("/api/bookings/{booking_id}/tickets/{ticket_id}/qr.png", "get"),
    ("/api/bookings/{booking_id}/tickets/{ticket_id}/qr.svg", "get"),
    ("/api/bookings/{booking_id}/tickets/{ticket_id}/boarding-pass.pdf", "get"),
    ("/api/payments/webhook", "post"),
    ("/api/payments/webhook/{gateway}", "post"),
    ("/api/checkin/scan", "post"),
    ("/api/flights/{flight_id}/waitlist", "get"),
    ("/api/flights/{flight_id}/waitlist", "post"),
    ("/api/flights/{flight_id}/waitlist", "delete"),
    ("/api/events/{event_id}/seats", "get"),
    ("/api/events/{event_id}/waitlist", "get"),
    ("/api/events/{event_id}/waitlist", "post"),
    ("/api/events/{event_id}/waitlist", "delete"),
}


@pytest.fixture
def openapi(anon):
    response = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def test_schema_lists_every_endpoint(openapi):
    assert openapi["openapi"].startswith("3.")
    found = {
        (path, method)
        for path, ops in openapi["paths"].items()
        for method in ops
        if method in {"get", "post", "put", "patch", "delete"}
    }
    assert found >= OPERATIONS


def test_every_error_is_documented_as_problem_json(openapi):
    for path, ops in openapi["paths"].items():
        for method, op in ops.items():
            for status, response in op["responses"].items():
                if status.startswith(("4", "5")):
                    assert list(response["content"]) == ["application/problem+json"], (path, status)
            if op.get("security") and {} not in op["security"]:
                assert "401" in op["responses"], (method, path)


def test_schema_documents_bodies_headers_and_camel_case(openapi):
    create = openapi["paths"]["/api/bookings"]["post"]
    request = create["requestBody"]["content"]["application/json"]
    assert request["examples"]["TheArticle'sRequest"]["value"] == {
        "flightId": 1001,
        "customerId": 42,
        "fareClass": "ECONOMY",
        "seats": ["12A", "12B"],
    }
    schemas = openapi["components"]["schemas"]
    assert {
        "flightId",
        "eventId",
        "customerId",
        "fareClass",
        "category",
        "seats",
        "passengers",
        "passengerNames",
    } == set(schemas["BookingCreateRequest"]["properties"])
    assert {"bookingId", "expiresAt", "amount", "currency", "seats", "status"} <= set(
        schemas["Booking"]["properties"]
    )
    assert "invalidParams" in schemas["Problem"]["properties"]
    assert "Retry-After" in create["responses"]["429"]["headers"]
    assert "Location" in create["responses"]["201"]["headers"]
    assert {"tokenAuth", "cookieAuth"} <= set(openapi["components"]["securitySchemes"])
    cancel = openapi["paths"]["/api/bookings/{booking_id}"]["delete"]
    assert {"200", "404", "409", "410"} <= set(cancel["responses"])


def test_schema_documents_payments_refunds_and_tickets(openapi):
    paths = openapi["paths"]
    operation_ids = [
        op["operationId"] for ops in paths.values() for op in ops.values() if isinstance(op, dict)
    ]
    assert len(operation_ids) == len(set(operation_ids))  # the two webhook routes included

    pay = paths["/api/bookings/{booking_id}/payments"]["post"]
    key = next(p for p in pay["parameters"] if p["name"] == "Idempotency-Key")
    assert key["in"] == "header" and key["required"] is True
    body = openapi["components"]["schemas"]["PayRequestRequest"]["properties"]
    assert set(body) == {"amount", "currency", "paymentMethod"}
    assert {
        "201",
        "202",
        "400",
        "401",
        "402",
        "404",
        "409",
        "410",
        "422",
        "429",
        "502",
        "503",
    } <= set(pay["responses"])
    assert "Retry-After" in pay["responses"]["503"]["headers"]
    assert "Location" not in pay["responses"]["201"].get("headers", {})

    for path in ("/api/payments/webhook", "/api/payments/webhook/{gateway}"):
        webhook = paths[path]["post"]
        # No user authentication (the signature is it): no security requirement, and no
        # document-wide one it could inherit.
        assert webhook.get("security", [{}]) == [{}] and "security" not in openapi
        assert {"200", "400", "503"} <= set(webhook["responses"])
        assert "Seatkeeper-Signature" in {p["name"] for p in webhook["parameters"]}

    cancel = paths["/api/bookings/{booking_id}"]["delete"]["responses"]["200"]
    cancellation = cancel["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    refund = openapi["components"]["schemas"]["Refund"]["properties"]
    assert {"booking", "refund", "policy"} == set(
        openapi["components"]["schemas"][cancellation]["properties"]
    )
    assert {"id", "amount", "currency", "status", "reason"} == set(refund)
    quote = paths["/api/bookings/{booking_id}/refund-quote"]["get"]["responses"]
    assert {"200", "401", "404"} <= set(quote)

    tickets = openapi["components"]["schemas"]["Ticket"]["properties"]
    assert {
        "ticketId",
        "serial",
        "passenger",
        "seat",
        "fareClass",
        "status",
        "code",
        "links",
    } <= set(tickets)
    base = "/api/bookings/{booking_id}/tickets/{ticket_id}"
    for path, media_type in [
        ("qr.png", "image/png"),
        ("qr.svg", "image/svg+xml"),
        ("boarding-pass.pdf", "application/pdf"),
    ]:
        responses = paths[f"{base}/{path}"]["get"]["responses"]
        assert list(responses["200"]["content"]) == [media_type]
        assert {"401", "404"} <= set(responses)


def test_swagger_ui_is_served(anon):
    response = anon.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content and b"/api/schema/" in response.content


# --- property-based: schemathesis against our own schema --------------------------------------


@pytest.fixture
def wsgi_app():
    # Django's test client detaches these too: closing "old" connections between requests
    # would close the test's transaction under our feet.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def token(customer):
    flight = FlightFactory()
    # Give generated requests real things to find: flight 1 .. n, a held booking of ours, and
    # a confirmed one with its ticket.
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    hold_and_confirm(customer, flight, seats=["14A"], names=["Ana Lima"])
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    return Token.objects.get_or_create(user=customer)[0].key


# Loaded at collection (it needs no database); `from_fixture` does not work with pytest 9.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
@pytest.mark.django_db(transaction=True)  # paying calls the gateway outside any transaction
def test_api_keeps_to_its_schema(case, wsgi_app, sandbox_payments, token):
    case.call_and_validate(
        headers={"Authorization": f"Token {token}"},
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
    )
