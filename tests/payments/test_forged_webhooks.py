"""Issue 11, item 1 (and the Low webhook-header item): a correctly signed webhook is not
enough to confirm a booking; sandbox routes exist only beside the sandbox gateway; a malformed
signature header is a 400, never a 500."""

import time

import pytest
from django.test import Client

from bookings.models import Booking, BookingStatus
from kernel.models import OutboxEvent
from payments.gateways.sandbox import SIGNATURE_HEADER, complete_checkout
from payments.models import Payment, PaymentStatus, SandboxCharge, WebhookEvent
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)

pytestmark = pytest.mark.django_db(transaction=True)


def held_and_unpaid(customer, flight):
    """Hold, then pay without a card: 202 with a hosted checkout nobody completed."""
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key=f"k-{booking.pk}")
    assert response.status_code == 202, response.content
    payment = Payment.objects.get(pk=response.json()["paymentId"])
    assert SandboxCharge.objects.get(pk=payment.gateway_reference).status == "requires_action"
    return booking, payment


def test_forged_signed_success_for_an_unpaid_charge_is_refused_and_recorded(customer, flight):
    """The review's flow: the signature is valid (the secret is known), the charge is not paid."""
    booking, payment = held_and_unpaid(customer, flight)
    response = post_webhook(Client(), *signed(sandbox_event(payment, event_id="evt_forged")))
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["type"].endswith("/webhook-event-refused")
    booking.refresh_from_db()
    payment.refresh_from_db()
    assert booking.status == BookingStatus.HELD
    assert payment.status == PaymentStatus.PENDING
    assert not OutboxEvent.objects.filter(event_type="booking.confirmed").exists()
    record = WebhookEvent.objects.get(event_id="evt_forged")
    assert record.outcome.startswith("refused: ") and "requires_action" in record.outcome
    # Sent again, it is still refused and changes nothing.
    again = post_webhook(Client(), *signed(sandbox_event(payment, event_id="evt_forged")))
    assert again.status_code == 400
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_forged_success_with_an_invented_charge_id_is_refused(customer, flight):
    booking, payment = held_and_unpaid(customer, flight)
    event = sandbox_event(payment, event_id="evt_invented")
    event["data"]["charge"] = "ch_invented"
    assert post_webhook(Client(), *signed(event)).status_code == 400
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_control_the_same_event_after_the_customer_paid_confirms(customer, flight):
    """Control: the check refuses only what the ledger contradicts."""
    booking, payment = held_and_unpaid(customer, flight)
    complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
    response = post_webhook(Client(), *signed(sandbox_event(payment, event_id="evt_real")))
    assert response.status_code == 200
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


# --- malformed signature headers -----------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "t={now},v1=é",
        "t={now},v1=\u00ff\u00fe",
        "t=é,v1=abc",
        "t=²,v1=abc",
        "t=9999999999999999999999999,v1=abc",
        "v1=abc",
        ",,,",
        "t={now},v1=",
    ],
)
def test_malformed_sandbox_signature_header_is_400_and_changes_nothing(customer, flight, header):
    booking, payment = held_and_unpaid(customer, flight)
    complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
    body, _ = signed(sandbox_event(payment))
    response = post_webhook(Client(), body, {SIGNATURE_HEADER: header.format(now=int(time.time()))})
    assert response.status_code == 400
    assert response.json()["type"].endswith("/webhook-signature-invalid")
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    assert not WebhookEvent.objects.exists()


def test_non_ascii_stripe_signature_header_is_400(settings):
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe"}
    settings.STRIPE = {**settings.STRIPE, "API_KEY": "sk_test_x", "WEBHOOK_SECRET": "whsec_x"}
    response = Client().post(
        "/api/payments/webhook",
        b'{"id": "evt"}',
        content_type="application/json",
        HTTP_STRIPE_SIGNATURE=f"t={int(time.time())},v1=é",
    )
    assert response.status_code == 400
    assert not WebhookEvent.objects.exists()


# --- sandbox routes only beside the sandbox gateway -------------------------------------------


def test_with_a_real_gateway_the_sandbox_routes_do_not_exist(settings, customer):
    charge = SandboxCharge.objects.create(
        id="ch_left_over",
        idempotency_key="k",
        merchant_reference="1",
        amount="10.00",
        currency="EUR",
        status="requires_action",
        created_at="2026-01-01T00:00:00Z",
    )
    client = Client()
    assert client.get(f"/sandbox/checkout/{charge.pk}").status_code == 200  # control
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe"}
    settings.STRIPE = {**settings.STRIPE, "API_KEY": "sk_test_x", "WEBHOOK_SECRET": "whsec_x"}
    assert client.get(f"/sandbox/checkout/{charge.pk}").status_code == 404
    assert (
        client.post(
            f"/sandbox/checkout/{charge.pk}", {"action": "approve", "card_number": GOOD_CARD}
        ).status_code
        == 404
    )
    body, headers = signed({"id": "evt_1", "type": "payment.succeeded", "data": {}})
    extra = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    webhook = client.post(
        "/api/payments/webhook/sandbox", body, content_type="application/json", **extra
    )
    assert webhook.status_code == 404
    assert SandboxCharge.objects.get(pk=charge.pk).status == "requires_action"
    assert not WebhookEvent.objects.exists()
