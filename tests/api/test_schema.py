"""The OpenAPI schema describes the API, and the API keeps to it under generated input."""

import zlib

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.schemathesis_world import build_world

pytestmark = pytest.mark.django_db

OPERATIONS = {
    ("/api/auth/token", "post"),
    ("/api/flights", "get"),
    ("/api/flights/{flightId}", "get"),
    ("/api/flights/{flightId}/seats", "get"),
    ("/api/bookings", "get"),
    ("/api/bookings", "post"),
    ("/api/bookings/{bookingId}", "get"),
    ("/api/bookings/{bookingId}", "delete"),
    ("/api/bookings/{bookingId}/payments", "post"),
    ("/api/bookings/{bookingId}/refund-quote", "get"),
    ("/api/bookings/{bookingId}/tickets", "get"),
    ("/api/bookings/{bookingId}/tickets/{ticketId}/qr.png", "get"),
    ("/api/bookings/{bookingId}/tickets/{ticketId}/qr.svg", "get"),
    ("/api/bookings/{bookingId}/tickets/{ticketId}/boarding-pass.pdf", "get"),
    ("/api/payments/webhook", "post"),
    ("/api/payments/webhook/sandbox", "post"),  # the gateway in use in the tests
    ("/api/checkin/scan", "post"),
    ("/api/flights/{flightId}/waitlist", "get"),
    ("/api/flights/{flightId}/waitlist", "post"),
    ("/api/flights/{flightId}/waitlist", "delete"),
    ("/api/events/{eventId}/seats", "get"),
    ("/api/events/{eventId}/waitlist", "get"),
    ("/api/events/{eventId}/waitlist", "post"),
    ("/api/events/{eventId}/waitlist", "delete"),
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
    assert request["examples"]["TheArticle'sRequest,WithThePassengers'Names"]["value"] == {
        "flightId": 1001,
        "customerId": 42,
        "fareClass": "ECONOMY",
        "seats": ["12A", "12B"],
        "passengerNames": ["Ana Lima", "Bo Chen"],  # issue 31: names travel with the hold
        "exitRowConfirmed": True,  # and the exit row's conditions are confirmed
    }
    schemas = openapi["components"]["schemas"]
    assert {
        "flightId",
        "eventId",
        "customerId",
        "fareClass",
        "category",
        "bookingClass",  # optional: nested booking classes (docs/fare-classes.md)
        "seats",
        "passengers",
        "passengerNames",
        "exitRowConfirmed",  # issue 31: exit-row conditions on the API (default false)
    } == set(schemas["BookingCreateRequest"]["properties"])
    assert "bookingClass" not in schemas["BookingCreateRequest"].get("required", [])
    assert {"bookingClasses", "cheapestOpen"} <= set(schemas["Fare"]["properties"])
    assert {"bookingId", "expiresAt", "amount", "currency", "seats", "status"} <= set(
        schemas["Booking"]["properties"]
    )
    assert "invalidParams" in schemas["Problem"]["properties"]
    assert "Retry-After" in create["responses"]["429"]["headers"]
    assert "Location" in create["responses"]["201"]["headers"]
    assert {"tokenAuth", "cookieAuth"} <= set(openapi["components"]["securitySchemes"])
    cancel = openapi["paths"]["/api/bookings/{bookingId}"]["delete"]
    assert {"200", "404", "409", "410"} <= set(cancel["responses"])


def test_schema_documents_payments_refunds_and_tickets(openapi):
    paths = openapi["paths"]
    operation_ids = [
        op["operationId"] for ops in paths.values() for op in ops.values() if isinstance(op, dict)
    ]
    assert len(operation_ids) == len(set(operation_ids))  # the two webhook routes included

    pay = paths["/api/bookings/{bookingId}/payments"]["post"]
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
    assert "Location" in pay["responses"]["201"]["headers"]  # issue 31: the booking confirmed

    for path, header in (
        ("/api/payments/webhook", "Seatkeeper-Signature"),  # the tests' gateway: the sandbox
        ("/api/payments/webhook/sandbox", "Seatkeeper-Signature"),
    ):
        webhook = paths[path]["post"]
        # No user authentication (the signature is it): no security requirement, and no
        # document-wide one it could inherit.
        assert webhook.get("security", [{}]) == [{}] and "security" not in openapi
        assert {"200", "400", "503"} <= set(webhook["responses"])
        # The gateway's own signature header, required (a missing one is 400), and no other.
        assert [(p["name"], p["required"]) for p in webhook["parameters"]] == [(header, True)]
    assert "/api/payments/webhook/{gateway}" not in paths
    # Stripe is not in use in the tests: its route answers 404, so it is not documented here.
    assert "/api/payments/webhook/stripe" not in paths

    cancel = paths["/api/bookings/{bookingId}"]["delete"]["responses"]["200"]
    cancellation = cancel["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    refund = openapi["components"]["schemas"]["Refund"]["properties"]
    assert {"booking", "refund", "policy"} == set(
        openapi["components"]["schemas"][cancellation]["properties"]
    )
    assert {"id", "amount", "currency", "status", "reason"} == set(refund)
    quote = paths["/api/bookings/{bookingId}/refund-quote"]["get"]["responses"]
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
    base = "/api/bookings/{bookingId}/tickets/{ticketId}"
    for path, media_type in [
        ("qr.png", "image/png"),
        ("qr.svg", "image/svg+xml"),
        ("boarding-pass.pdf", "application/pdf"),
    ]:
        responses = paths[f"{base}/{path}"]["get"]["responses"]
        assert list(responses["200"]["content"]) == [media_type]
        assert {"401", "404"} <= set(responses)


def test_a_server_that_takes_stripe_webhooks_documents_their_route(anon, settings):
    settings.STRIPE = {**settings.STRIPE, "WEBHOOK_SECRET": "whsec_test"}
    response = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    webhook = response.json()["paths"]["/api/payments/webhook/stripe"]["post"]
    assert [(p["name"], p["required"]) for p in webhook["parameters"]] == [
        ("Stripe-Signature", True)
    ]


def test_swagger_ui_is_served(anon):
    response = anon.get("/api/docs/")
    assert response.status_code == 200
    assert b"swagger-ui" in response.content and b"/api/schema/" in response.content


# --- property-based: schemathesis against our own schema --------------------------------------


@pytest.fixture
def world(customer):
    return build_world(customer)


def with_real_ids(case, world) -> None:
    """Most generated path ids become real ones (chosen by the generated value, so Hypothesis
    still explores and shrinks); the rest stay as generated, for the 404 paths."""
    params = case.path_parameters or {}
    for name, value in list(params.items()):
        pick = zlib.crc32(str(value).encode())
        if pick % 4 == 0:
            continue
        if name in ("bookingId", "ticketId"):
            booking_id, ticket_id = world["booking_ticket"][pick % 2]
            params["bookingId"] = booking_id
            if "ticketId" in params:
                params["ticketId"] = ticket_id
        elif name in world:
            params[name] = world[name][pick % len(world[name])]


# Loaded at collection (it needs no database); `from_fixture` does not work with pytest 9.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", get_wsgi_application())


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.mark.django_db(transaction=True)  # paying calls the gateway outside any transaction
def test_api_keeps_to_its_schema_on_every_operation(
    keep_the_tests_connection, sandbox_payments, world
):
    """Every operation of the schema, in one test: the real data is built once (it is most of
    the cost of a test per operation), and each operation gets its own Hypothesis run, as
    the customer, with most path ids real.  Any 5xx or schema mismatch fails, naming the
    operation; the state one leaves (a booking cancelled, a waitlist joined) is what the next
    finds, as in real use."""
    headers = {"Authorization": f"Token {world['token']}"}
    failures, tried = [], set()
    for result in schema.get_all_operations():
        operation = result.ok()
        tried.add((operation.path, operation.method.lower()))

        @given(case=operation.as_strategy())
        @settings(
            max_examples=20,
            deadline=None,
            database=None,
            suppress_health_check=[
                HealthCheck.function_scoped_fixture,
                HealthCheck.too_slow,
                HealthCheck.filter_too_much,
            ],
        )
        def run(case):
            with_real_ids(case, world)
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            run()
        except Exception as error:  # collected: every operation runs, each failure named
            failures.append(f"{operation.label}: {error}")
    assert tried >= OPERATIONS
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    "path", ["/api/payments/webhook", "/api/payments/webhook/sandbox"], ids=["configured", "named"]
)
def test_a_webhook_without_its_signature_header_is_refused_as_the_schema_says(anon, path):
    """The schema marks the signature header required: the server refuses a webhook without
    it (400 problem+json) before reading anything."""
    response = anon.post(path, {"type": "payment.succeeded"}, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")


def test_control_a_name_that_is_no_gateway_has_no_webhook(anon):
    assert anon.post("/api/payments/webhook/paypal", {}, format="json").status_code == 404
