"""Issue 31, item 21: the smaller contract gaps a partner met, and the sign-up and `/api/me`
endpoints a partner that acts for customers needs.  (These tests were written with the fixes,
in tests/api/test_contract_gaps.py, and lost when that file was reused for the schemathesis
findings; restored here so each gap has a test that fails if it comes back.)"""

import re
import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from bookings.lifecycle import expire_holds
from kernel.idempotency import _lock_key
from tests.api.conftest import GOOD_CARD, client_for, pay, problem
from tests.events.factories import EventFactory
from tests.factories import UserFactory, named_hold
from waitroom.staff import open_waiting_room

HOLD = {
    "fareClass": "ECONOMY",
    "seats": ["12A"],
    "passengerNames": ["Ana Lima"],
    "exitRowConfirmed": True,
}


def schema_of(client) -> dict:
    return client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


@pytest.mark.django_db(transaction=True)
def test_a_key_still_in_flight_answers_409_with_retry_after(customer, flight):
    """Another request holds the key's lock (a real second connection) while we retry."""
    locked, release = threading.Event(), threading.Event()

    def first_request():
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s)",
                [_lock_key(flight.sale_id, customer.pk, "api-hold", "k-1")],
            )
            locked.set()
            release.wait(10)
        connection.close()

    other = threading.Thread(target=first_request)
    other.start()
    try:
        assert locked.wait(10)
        response = client_for(customer).post(
            "/api/bookings",
            {"flightId": flight.pk, **HOLD},
            format="json",
            HTTP_IDEMPOTENCY_KEY="k-1",
        )
    finally:
        release.set()
        other.join()
    body = problem(response, 409)
    assert body["type"].endswith("idempotency-key-in-flight")
    assert int(response["Retry-After"]) >= 1


@pytest.mark.django_db(transaction=True)
def test_the_payments_201_names_the_booking_in_location(sandbox_payments, customer, flight):
    booking = named_hold(customer=customer, flight=flight)
    response = pay(client_for(customer), booking.pk, paymentMethod=GOOD_CARD)
    assert response.status_code == 201
    assert response["Location"] == f"/api/bookings/{booking.pk}"


@pytest.mark.django_db
def test_a_replayed_hold_after_expiry_answers_the_current_state(api, flight):
    def hold():
        return api.post(
            "/api/bookings",
            {"flightId": flight.pk, **HOLD},
            format="json",
            HTTP_IDEMPOTENCY_KEY="k-2",
        )

    first = hold()
    assert first.status_code == 201 and first.json()["status"] == "HELD"
    expire_holds(now=timezone.now() + timedelta(hours=1))

    replay = hold()
    assert replay.status_code == 201
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json()["bookingId"] == first.json()["bookingId"]
    assert replay.json()["status"] == "EXPIRED" and replay.json()["expiresAt"] is None


@pytest.mark.django_db
def test_the_queue_answer_writes_instants_in_z_and_names_the_room(api, flight):
    room = open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() + timedelta(hours=1),
        admit_per_minute=10,
        max_inside=10,
    )
    body = api.get(f"/api/waiting-rooms/{room.pk}/queue").json()
    assert body["opensAt"].endswith("Z") and "+00:00" not in body["opensAt"]
    assert body["opensAt"] == api.get(f"/api/waiting-rooms/{room.pk}").json()["opensAt"]
    assert body["roomId"] == room.pk


@pytest.mark.django_db
def test_queue_fields_are_documented(anon):
    status = schema_of(anon)["components"]["schemas"]["QueueStatus"]["properties"]
    assert {"entryId", "orderKey", "enterUrl", "roomId", "opensAt"} <= set(status)


@pytest.mark.django_db
def test_path_parameters_are_camel_case(anon):
    schema = schema_of(anon)
    for path, operations in schema["paths"].items():
        assert "_" not in "".join(re.findall(r"\{(\w+)\}", path)), path
        for operation in operations.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if parameter["in"] == "path":
                    assert "_" not in parameter["name"], (path, parameter["name"])
                    assert "{" + parameter["name"] + "}" in path


@pytest.mark.django_db
def test_an_event_says_which_fare_class_books_its_standing_places(anon):
    event = EventFactory()
    categories = anon.get(f"/api/events/{event.pk}").json()["priceCategories"]
    areas = {c["code"]: c["standingAreas"] for c in categories}
    seat_map = anon.get(f"/api/events/{event.pk}/seats").json()
    for area in seat_map["standingAreas"]:
        assert area["fareClass"] in areas[area["category"]]
    assert any(areas.values()) and all(a.startswith("GA-") for v in areas.values() for a in v)


@pytest.mark.django_db
def test_events_are_never_told_about_cabins(anon):
    create = schema_of(anon)["paths"]["/api/bookings"]["post"]
    problem_schema = schema_of(anon)["components"]["schemas"]["Problem"]["properties"]
    assert "cabin" not in problem_schema["seats"]["description"]
    assert "flights: `seat-wrong-cabin`" in create["responses"]["400"]["description"]


# --- sign-up and /api/me ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_partner_signs_up_a_customer_and_books_with_its_token(anon, flight, mailoutbox):
    response = anon.post(
        "/api/accounts",
        {"username": "ana.lima", "email": "Ana@Example.org", "password": "a-long-pass-phrase-9"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["username"] == "ana.lima" and body["emailVerified"] is False
    assert response["Location"] == "/api/me"
    customer_api = client_for()
    customer_api.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    me = customer_api.get("/api/me").json()
    assert me["userId"] == body["userId"] and me["email"] == "Ana@example.org"
    assert me["actsForCustomers"] is False
    held = customer_api.post("/api/bookings", {"flightId": flight.pk, **HOLD}, format="json")
    assert held.status_code == 201 and held.json()["customerId"] == body["userId"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (
            {"username": "taken", "email": "new@example.org", "password": "a-long-pass-phrase-9"},
            400,
            "username",
        ),
        (
            {"username": "new", "email": "not-an-address", "password": "a-long-pass-phrase-9"},
            400,
            "email",
        ),
        ({"username": "new", "email": "new@example.org", "password": "123"}, 400, "password"),
        (
            {"username": "new", "email": "TAKEN@example.org", "password": "a-long-pass-phrase-9"},
            409,
            None,
        ),
    ],
)
def test_sign_up_refusals_are_problems_and_create_nothing(anon, body, status, field):
    UserFactory(username="taken", email="taken@example.org")
    from django.contrib.auth import get_user_model

    before = get_user_model().objects.count()
    data = problem(anon.post("/api/accounts", body, format="json"), status)
    if field:
        assert field in {p["name"] for p in data["invalidParams"]}
    assert get_user_model().objects.count() == before


@pytest.mark.django_db
def test_me_needs_a_token_and_shows_an_agent(anon, agent):
    assert anon.get("/api/me").status_code == 401
    assert client_for(agent).get("/api/me").json()["actsForCustomers"] is True
