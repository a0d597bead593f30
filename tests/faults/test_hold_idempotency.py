"""POST /api/bookings with Idempotency-Key: a retried hold never makes a second booking."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from bookings.models import Booking
from flights.models import FareInventory
from flights.services import check_inventory
from kernel.idempotency import _lock_key
from kernel.models import IdempotencyRecord
from tests.api.conftest import client_for
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def body(flight, seats=("12A", "12B")):
    return {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        "seats": list(seats),
        "exitRowConfirmed": True,
    }


def held(flight) -> int:
    return FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").held


def test_same_key_same_body_replays_the_first_booking(customer, flight):
    api = client_for(customer)
    first = api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert first.status_code == again.status_code == 201, again.content
    assert "Idempotent-Replayed" not in first
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert again["Location"] == first["Location"]
    assert Booking.objects.count() == 1
    assert held(flight) == 2
    assert check_inventory(sale_id=flight.sale_id) == []


def test_without_a_key_a_retry_is_a_new_request(customer, flight):
    """Control: the key is what makes the retry safe (here the seats are taken: 409)."""
    api = client_for(customer)
    assert api.post("/api/bookings", body(flight), format="json").status_code == 201
    retry = api.post("/api/bookings", body(flight), format="json")
    assert retry.status_code == 409
    seatless = {"flightId": flight.pk, "fareClass": "ECONOMY", "passengers": 1}
    api.post("/api/bookings", seatless, format="json")
    api.post("/api/bookings", seatless, format="json")
    assert Booking.objects.count() == 3  # two seatless retries without a key: two bookings


def test_same_key_different_body_is_422_and_changes_nothing(customer, flight):
    api = client_for(customer)
    api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-2")
    other = api.post(
        "/api/bookings", body(flight, ["14C"]), format="json", HTTP_IDEMPOTENCY_KEY="k-2"
    )
    assert other.status_code == 422
    assert other.json()["type"].endswith("/idempotency-key-reused")
    assert Booking.objects.count() == 1
    assert held(flight) == 2


def test_keys_are_scoped_per_customer(customer, other_customer, flight):
    mine = client_for(customer).post(
        "/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="shared"
    )
    theirs = client_for(other_customer).post(
        "/api/bookings", body(flight, ["14C"]), format="json", HTTP_IDEMPOTENCY_KEY="shared"
    )
    assert (mine.status_code, theirs.status_code) == (201, 201)
    assert mine.json()["bookingId"] != theirs.json()["bookingId"]


def test_a_key_is_one_per_sale_so_the_same_key_on_another_sale_is_a_new_hold(customer, flight):
    """The record is the sale's row (kernel/sharding.py): (sale, customer, scope, key) is the
    rule, so a key sent for another flight holds there; on the same flight it still replays."""
    other_flight = FlightFactory()
    api = client_for(customer)
    first = api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-s")
    there = api.post("/api/bookings", body(other_flight), format="json", HTTP_IDEMPOTENCY_KEY="k-s")
    again = api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-s")
    assert (first.status_code, there.status_code, again.status_code) == (201, 201, 201)
    assert "Idempotent-Replayed" not in there
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["bookingId"] == first.json()["bookingId"] != there.json()["bookingId"]
    assert set(IdempotencyRecord.objects.values_list("sale_id", flat=True)) == {
        flight.sale_id,
        other_flight.sale_id,
    }


def test_a_refused_hold_is_not_remembered(customer, other_customer, flight):
    client_for(other_customer).post("/api/bookings", body(flight), format="json")
    api = client_for(customer)
    refused = api.post("/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k-3")
    assert refused.status_code == 409
    assert not IdempotencyRecord.objects.exists()


def test_a_key_in_flight_is_409(customer, flight):
    """Another request is inside its hold transaction with this key (its advisory lock)."""
    with psycopg.connect(**_dsn(), autocommit=False) as other:
        lock = _lock_key(flight.sale_id, customer.pk, "api-hold", "k")
        other.execute("SELECT pg_advisory_xact_lock(%s)", [lock])
        busy = client_for(customer).post(
            "/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k"
        )
        other.rollback()
    assert busy.status_code == 409
    assert busy.json()["type"].endswith("/idempotency-key-in-flight")
    assert Booking.objects.count() == 0
    done = client_for(customer).post(
        "/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert done.status_code == 201


def test_a_too_long_key_is_400(customer, flight):
    response = client_for(customer).post(
        "/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="x" * 256
    )
    assert response.status_code == 400
    assert Booking.objects.count() == 0


def test_parallel_retries_with_one_key_make_one_booking(customer, flight):
    """Twelve copies of one request at once: one booking; every 201 names it."""

    def post():
        response = client_for(customer).post(
            "/api/bookings", body(flight), format="json", HTTP_IDEMPOTENCY_KEY="burst"
        )
        return response.status_code, response.json()

    outcomes = run_concurrently([post] * 12)
    assert outcomes.errors == []
    statuses = [status for status, _ in outcomes.results]
    assert set(statuses) <= {201, 409}, statuses
    ids = {data["bookingId"] for status, data in outcomes.results if status == 201}
    assert len(ids) == 1
    assert Booking.objects.count() == 1
    assert held(flight) == 2
    assert check_inventory(sale_id=flight.sale_id) == []


def test_the_schema_tells_clients_to_send_the_key_and_retry_5xx(customer):
    schema = client_for(UserFactory()).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    create = schema["paths"]["/api/bookings"]["post"]
    key = next(p for p in create["parameters"] if p["name"] == "Idempotency-Key")
    assert key["in"] == "header" and not key.get("required", False)
    assert "retry" in key["description"] and "5xx" in key["description"]
    assert {"409", "422", "503"} <= set(create["responses"])


def _dsn() -> dict:
    settings = connection.settings_dict
    return {
        "dbname": settings["NAME"],
        "user": settings["USER"],
        "host": settings["HOST"],
        "port": settings["PORT"] or 5432,
    }
