"""POST /api/bookings/{id}/payments: Idempotency-Key, confirmation, the gateway boundary."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments.errors import GatewayError
from payments.gateways.sandbox import SandboxGateway
from payments.models import Payment, PaymentStatus, SandboxCharge
from payments.paying import purge_idempotency_keys
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


def test_card_payment_confirms_booking_sells_seats_and_writes_outbox(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, amount="208.00", paymentMethod=GOOD_CARD)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "SUCCEEDED" and body["bookingStatus"] == "CONFIRMED"
    assert body["amount"] == "208.00" and body["currency"] == "EUR"
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED and booking.confirmed_at is not None
    seats = Seat.objects.filter(sale=flight.sale, seat_no__in=["12A", "12B"])
    assert {(s.status, s.held_until, s.booking_id) for s in seats} == {
        (SeatStatus.SOLD, None, booking.pk)
    }
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    assert (inventory.held, inventory.sold) == (0, 2)
    event = OutboxEvent.objects.get(event_type="booking.confirmed")
    assert event.aggregate_id == str(booking.pk)
    assert event.payload["bookingId"] == booking.pk and event.payload["saleId"] == flight.sale_id
    assert event.payload["seats"] == ["12A", "12B"]
    assert SandboxCharge.objects.get().status == "succeeded"
    assert check_inventory(sale_id=flight.sale_id) == []


def test_missing_key_is_400_and_nothing_changes(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key=None, paymentMethod=GOOD_CARD)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"].endswith("/idempotency-key-missing")
    assert not Payment.objects.exists() and not SandboxCharge.objects.exists()
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_same_key_same_request_replays_stored_response_without_second_charge(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    first = pay(client, booking, key="abc", amount="208.00", paymentMethod=GOOD_CARD)
    again = pay(client, booking, key="abc", amount="208.00", paymentMethod=GOOD_CARD)

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert SandboxCharge.objects.count() == 1 and Payment.objects.count() == 1
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1


def test_declined_payment_replays_402_too(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    first = pay(client, booking, key="d", paymentMethod="4000000000000002")
    again = pay(client, booking, key="d", paymentMethod="4000000000000002")
    assert first.status_code == again.status_code == 402
    assert again.json() == first.json()
    assert first.json()["type"].endswith("/payment-declined")
    assert "card_declined" in first.json()["detail"]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    # A decline frees the booking for another attempt with a new key.
    retry = pay(client, booking, key="d2", paymentMethod=GOOD_CARD)
    assert retry.status_code == 201
    assert SandboxCharge.objects.count() == 2


def test_same_key_different_request_is_422(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    assert (
        pay(client, booking, key="k", amount="208.00", paymentMethod=GOOD_CARD).status_code == 201
    )
    changed = pay(client, booking, key="k", amount="209.00", paymentMethod=GOOD_CARD)
    assert changed.status_code == 422
    assert changed.json()["type"].endswith("/idempotency-key-reused")
    assert SandboxCharge.objects.count() == 1


def test_same_key_while_first_request_runs_is_409(customer, flight, monkeypatch):
    """A retry arriving while the gateway call of the first request is still running."""
    booking = hold(customer, flight)
    client = api_client(customer)
    seen = {}
    original = SandboxGateway.create_payment

    def gateway_call_with_a_retry_arriving(self, **kwargs):
        seen["in_atomic_block"] = connection.in_atomic_block
        seen["autocommit"] = connection.get_autocommit()
        with connection.cursor() as cursor:
            # A backend holding row locks always holds its transaction id and a row-level
            # table lock; in autocommit between statements there must be none.
            cursor.execute(
                "SELECT locktype, mode FROM pg_locks WHERE pid = pg_backend_pid() "
                "AND (locktype = 'transactionid' OR mode IN ('RowShareLock', 'RowExclusiveLock'))"
            )
            seen["locks"] = cursor.fetchall()
        seen["retry"] = pay(Client(), booking, key="slow")  # anonymous: must not see the key
        seen["retry_same_customer"] = pay(client, booking, key="slow", paymentMethod=GOOD_CARD)
        return original(self, **kwargs)

    monkeypatch.setattr(SandboxGateway, "create_payment", gateway_call_with_a_retry_arriving)
    first = pay(client, booking, key="slow", paymentMethod=GOOD_CARD)

    assert first.status_code == 201
    assert seen["retry_same_customer"].status_code == 409
    assert seen["retry_same_customer"].json()["type"].endswith("/idempotency-key-in-flight")
    assert seen["retry"].status_code == 401
    assert seen["in_atomic_block"] is False and seen["autocommit"] is True
    assert seen["locks"] == []
    # The payment row was committed before the gateway heard of it.
    assert Payment.objects.get().status == PaymentStatus.SUCCEEDED


def test_keys_are_scoped_per_customer(customer, other_customer, flight):
    mine = hold(customer, flight, seats=["12A"])
    theirs = hold(other_customer, flight, seats=["14A"])
    assert pay(api_client(customer), mine, key="shared", paymentMethod=GOOD_CARD).status_code == 201
    assert (
        pay(api_client(other_customer), theirs, key="shared", paymentMethod=GOOD_CARD).status_code
        == 201
    )
    assert Payment.objects.filter(idempotency_key="shared").count() == 2


def test_only_own_booking_can_be_paid(customer, other_customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(other_customer), booking, paymentMethod=GOOD_CARD)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert not Payment.objects.exists()


def test_authentication_required_and_session_works(customer, flight):
    booking = hold(customer, flight)
    anonymous = pay(Client(), booking, paymentMethod=GOOD_CARD)
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"].startswith("Token")
    assert anonymous["Content-Type"] == "application/problem+json"
    session = Client()
    session.force_login(customer)
    response = session.post(
        f"/api/bookings/{booking.pk}/payments",
        {"paymentMethod": GOOD_CARD},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="s1",
    )
    assert response.status_code == 201


def test_amount_must_match_the_booking(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, amount="1.00", paymentMethod=GOOD_CARD)
    assert response.status_code == 400
    assert response.json()["amount"] == "208.00"
    assert not Payment.objects.exists()


def test_invalid_body_is_400_problem(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, amount="lots")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert [p["name"] for p in response.json()["invalidParams"]] == ["amount"]
    assert not Payment.objects.exists()


def test_expired_hold_cannot_be_paid(customer, flight):
    booking = hold(customer, flight)
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = pay(api_client(customer), booking, paymentMethod=GOOD_CARD)
    assert response.status_code == 410
    assert not SandboxCharge.objects.exists()


def test_hosted_checkout_is_202_and_a_second_attempt_supersedes_it(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    first = pay(client, booking, key="h1")
    assert first.status_code == 202
    assert first.json()["status"] == "PENDING"
    assert first.json()["checkoutUrl"].startswith("/sandbox/checkout/ch_")
    second = pay(client, booking, key="h2", paymentMethod=GOOD_CARD)
    assert second.status_code == 201
    # The waiting checkout was cancelled at the sandbox first: one charge succeeded, ever.
    statuses = sorted(SandboxCharge.objects.values_list("status", flat=True))
    assert statuses == ["canceled", "succeeded"]


def test_gateway_unreachable_is_502_and_stored(customer, flight, monkeypatch):
    booking = hold(customer, flight)

    def down(self, **kwargs):
        raise GatewayError("connection refused")

    monkeypatch.setattr(SandboxGateway, "create_payment", down)
    client = api_client(customer)
    assert pay(client, booking, key="x", paymentMethod=GOOD_CARD).status_code == 502
    assert pay(client, booking, key="x", paymentMethod=GOOD_CARD).status_code == 502
    assert Payment.objects.get().status == PaymentStatus.FAILED
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_keys_are_kept_for_the_retention_period_then_purged(customer, flight, settings):
    assert settings.PAYMENTS["IDEMPOTENCY_KEY_RETENTION"] >= timedelta(hours=24)
    booking = hold(customer, flight)
    pay(api_client(customer), booking, key="old", paymentMethod=GOOD_CARD)
    retention = settings.PAYMENTS["IDEMPOTENCY_KEY_RETENTION"]
    assert purge_idempotency_keys(now=timezone.now() + retention - timedelta(minutes=1)) == 0
    assert purge_idempotency_keys(now=timezone.now() + retention + timedelta(minutes=1)) == 1
    assert Payment.objects.get().idempotency_key is None
    assert Payment.objects.get().amount == Decimal("208.00")
