"""Issue 31, partners: the first integration works on the first try (item 15) and a booking
shows its refunds (item 19)."""

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from flights.models import Flight
from payments.models import Refund
from tests.api.conftest import GOOD_CARD, client_for, pay
from tests.factories import named_hold

README = Path(settings.BASE_DIR) / "README.md"


def readme_hold_body() -> dict:
    """The JSON body the README's "REST API in a few calls" sends to POST /api/bookings."""
    text = README.read_text()
    section = text[text.index("## The REST API in a few calls") :]
    match = re.search(r"localhost:8000/api/bookings -H .*?\n\s+-d '(\{.*?\})'", section, re.S)
    assert match, "the README's hold call was not found"
    return json.loads(match.group(1))


@pytest.mark.django_db(transaction=True)
def test_the_readme_journey_pays_on_the_first_try(sandbox_payments, customer, flight):
    body = {**readme_hold_body(), "flightId": flight.pk}
    api = client_for(customer)
    held = api.post("/api/bookings", body, format="json")
    assert held.status_code == 201, held.content
    assert held.json()["namesNeeded"] is False and held.json()["unnamedPassengers"] == []

    paid = pay(api, held.json()["bookingId"], paymentMethod=GOOD_CARD)
    assert paid.status_code == 201, paid.content


@pytest.mark.django_db(transaction=True)
def test_a_hold_without_names_says_so_and_where_to_put_them(sandbox_payments, customer, flight):
    api = client_for(customer)
    held = api.post(
        "/api/bookings",
        {
            "flightId": flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12B", "12A"],
            "exitRowConfirmed": True,
        },
        format="json",
    )
    assert held.status_code == 201, held.content
    data = held.json()
    assert data["namesNeeded"] is True
    assert [(p["position"], p["seat"]) for p in data["unnamedPassengers"]] == [
        (1, "12A"),
        (2, "12B"),
    ]
    assert data["namePassengersUrl"] == f"/api/bookings/{data['bookingId']}/passengers"

    named = api.put(
        data["namePassengersUrl"], {"passengerNames": ["Ana Lima", "Bo Chen"]}, format="json"
    )
    assert named.status_code == 200 and named.json()["namesNeeded"] is False
    assert pay(api, data["bookingId"], paymentMethod=GOOD_CARD).status_code == 201


@pytest.mark.django_db
def test_the_schema_example_and_field_say_to_send_names(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    create = schema["paths"]["/api/bookings"]["post"]
    examples = create["requestBody"]["content"]["application/json"]["examples"]
    flight_examples = [e["value"] for e in examples.values() if "flightId" in e["value"]]
    assert flight_examples and all("passengerNames" in e for e in flight_examples)
    booking = schema["components"]["schemas"]["Booking"]
    assert {"namesNeeded", "unnamedPassengers", "namePassengersUrl"} <= set(booking["properties"])
    assert "namesNeeded" in create["description"]


@pytest.mark.django_db(transaction=True)
def test_a_booking_shows_its_refunds_after_cancelling(sandbox_payments, customer, flight):
    departure = timezone.now() + timedelta(days=30)
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=departure, arrival_at=departure + timedelta(hours=2)
    )
    booking = named_hold(customer=customer, flight=flight)
    api = client_for(customer)
    assert pay(api, booking.pk, paymentMethod=GOOD_CARD).status_code == 201
    assert api.get(f"/api/bookings/{booking.pk}").json()["refunds"] == []

    assert api.delete(f"/api/bookings/{booking.pk}").status_code == 200
    refund = Refund.objects.get()
    read = api.get(f"/api/bookings/{booking.pk}")
    assert read.status_code == 200
    assert read.json()["refunds"] == [
        {
            "id": refund.pk,
            "amount": "208.00",
            "currency": "EUR",
            "status": "SUCCEEDED",
            "reason": "CANCELLATION",
        }
    ]
