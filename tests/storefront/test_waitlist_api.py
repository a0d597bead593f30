"""The waitlist through the REST API, and an offer paid through the payments service."""

import pytest
from rest_framework.test import APIClient

from bookings.lifecycle import cancel_hold
from bookings.models import WaitlistEntry, WaitlistStatus
from payments.paying import pay_for_booking
from tests.bookings.test_waitlist import sold_out_flight
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiet_sandbox(settings):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def client_for(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_join_status_and_leave_over_the_api(customer, flight):
    api = client_for(customer)
    refused = api.post(
        f"/api/flights/{flight.pk}/waitlist",
        {"fareClass": "ECONOMY", "partySize": 2},
        format="json",
    )
    assert refused.status_code == 409 and refused["Content-Type"] == "application/problem+json"
    assert refused.json()["type"].endswith("/not-sold-out")

    full, _ = sold_out_flight()
    ahead = UserFactory()
    client_for(ahead).post(f"/api/flights/{full.pk}/waitlist", {"partySize": 1}, format="json")
    joined = api.post(
        f"/api/flights/{full.pk}/waitlist", {"fareClass": "ECONOMY", "partySize": 2}, format="json"
    )
    assert joined.status_code == 201, joined.json()
    body = joined.json()
    assert (
        body["flightId"],
        body["fareClass"],
        body["partySize"],
        body["status"],
        body["position"],
    ) == (
        full.pk,
        "ECONOMY",
        2,
        "WAITING",
        2,
    )
    assert body["offer"] is None
    again = api.post(f"/api/flights/{full.pk}/waitlist", {"partySize": 1}, format="json")
    assert again.status_code == 409

    status = api.get(f"/api/flights/{full.pk}/waitlist?fareClass=ECONOMY")
    assert status.status_code == 200 and status.json()["position"] == 2

    left = api.delete(f"/api/flights/{full.pk}/waitlist")
    assert left.status_code == 200 and left.json()["status"] == "LEFT"
    assert api.get(f"/api/flights/{full.pk}/waitlist").status_code == 404
    assert api.delete(f"/api/flights/{full.pk}/waitlist").status_code == 404


@pytest.mark.parametrize(
    ("body", "query", "status"),
    [
        ({"partySize": 0}, "", 400),
        ({"partySize": 10}, "", 400),
        ({"partySize": "many"}, "", 400),
        ({"fareClass": "FIRST", "partySize": 1}, "", 400),
        ({}, "", 400),
    ],
)
def test_bad_join_requests_are_problems_and_change_nothing(customer, body, query, status):
    full, _ = sold_out_flight()
    response = client_for(customer).post(
        f"/api/flights/{full.pk}/waitlist{query}", body, format="json"
    )
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert not WaitlistEntry.objects.exists()


def test_unknown_flight_bad_fare_query_and_anonymous(customer):
    api = client_for(customer)
    assert (
        api.post("/api/flights/999999/waitlist", {"partySize": 1}, format="json").status_code == 404
    )
    full, _ = sold_out_flight()
    assert api.get(f"/api/flights/{full.pk}/waitlist?fareClass=FIRST").status_code == 400
    assert (
        APIClient()
        .post(f"/api/flights/{full.pk}/waitlist", {"partySize": 1}, format="json")
        .status_code
        == 401
    )


@pytest.mark.django_db(transaction=True)  # the gateway is only ever called outside a transaction
def test_offer_shows_up_in_status_and_paying_it_books_the_entry(customer):
    full, holders = sold_out_flight()
    api = client_for(customer)
    api.post(f"/api/flights/{full.pk}/waitlist", {"partySize": 1}, format="json")
    cancel_hold(customer=holders[0].customer, booking_id=holders[0].pk)

    status = api.get(f"/api/flights/{full.pk}/waitlist").json()
    assert status["status"] == "OFFERED" and status["position"] is None
    offer_id = status["offer"]["bookingId"]

    named = api.put(
        f"/api/bookings/{offer_id}/passengers", {"passengerNames": ["Wei Zhang"]}, format="json"
    )
    assert named.status_code == 200, named.content
    pay_for_booking(
        customer=customer,
        booking_id=offer_id,
        idempotency_key="offer-pay-1",
        payment_method="4242424242424242",
    )
    entry = WaitlistEntry.objects.get(customer=customer)
    assert entry.status == WaitlistStatus.BOOKED
    assert entry.offer.status == "CONFIRMED"
    assert entry.offer.passengers.get().full_name == "Wei Zhang"
