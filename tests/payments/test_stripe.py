"""The Stripe adapter, offline: the SDK's HTTP client is replaced by a stub that records
requests and answers like Stripe; webhooks are signed with Stripe's scheme."""

import hashlib
import hmac
import json
import re
import time
from decimal import Decimal
from urllib.parse import parse_qs

import pytest
import stripe
from django.test import Client

from bookings.models import BookingStatus
from kernel.models import OutboxEvent
from payments.cancellation import cancel_booking
from payments.errors import WebhookSignatureInvalid
from payments.gateways.stripe import StripeGateway
from payments.models import Payment, PaymentStatus, Refund, RefundStatus
from tests.payments.helpers import api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "whsec_stripe_test"


class StubStripeHTTP(stripe.HTTPClient):
    """Answers like Stripe, including its idempotency: a repeated Idempotency-Key gets the
    object the first request made."""

    name = "stub"

    def __init__(self):
        super().__init__()
        self.requests = []
        self.intent_status = "succeeded"
        self.decline = False
        self.by_key = {}
        self.objects = {}
        self.created = 0

    def request(self, method, url, headers, post_data=None, *, _usage=None):
        params = {k: v[0] for k, v in parse_qs(post_data or "").items()}
        self.requests.append(
            {"method": method, "url": url, "headers": dict(headers), "params": params}
        )
        key = dict(headers).get("Idempotency-Key")
        path = url.split("api.stripe.com", 1)[-1].split("?")[0]
        if method == "post" and key in self.by_key:
            return json.dumps(self.objects[self.by_key[key]]), 200, {}
        if path == "/v1/payment_intents":
            self.created += 1
            intent = {
                "id": "pi_123" if self.created == 1 else f"pi_{self.created}",
                "object": "payment_intent",
                "amount": int(params["amount"]),
                "currency": params["currency"],
                "status": self.intent_status,
                "metadata": {"payment_id": params["metadata[payment_id]"]},
                "client_secret": "pi_123_secret_abc",
                "next_action": {"type": "use_stripe_sdk"}
                if self.intent_status == "requires_action"
                else None,
            }
            if self.decline:
                error = {
                    "error": {
                        "type": "card_error",
                        "code": "card_declined",
                        "message": "Declined",
                        "payment_intent": {**intent, "status": "requires_payment_method"},
                    }
                }
                return json.dumps(error), 402, {}
            return self._store(key, intent)
        if path == "/v1/checkout/sessions":
            self.created += 1
            session = {
                "id": f"cs_test_{self.created}",
                "object": "checkout.session",
                "url": f"https://checkout.stripe.com/c/pay/cs_test_{self.created}",
                "status": "open",
                "payment_status": "unpaid",
                "payment_intent": None,
                "amount_total": int(params["line_items[0][price_data][unit_amount]"]),
                "metadata": {"payment_id": params["metadata[payment_id]"]},
                "success_url": params["success_url"],
            }
            return self._store(key, session)
        action = re.fullmatch(
            r"/v1/(?:payment_intents|checkout/sessions)/(\w+?)(?:/(cancel|expire))?", path
        )
        if action:
            return self._act(*action.groups())
        if path == "/v1/refunds":
            refund = {
                "id": "re_456",
                "object": "refund",
                "amount": int(params["amount"]),
                "payment_intent": params["payment_intent"],
                "status": "succeeded",
            }
            return json.dumps(refund), 200, {}
        return self._error(404, "no route")

    def _store(self, key, obj):
        self.objects[obj["id"]] = obj
        if key:
            self.by_key[key] = obj["id"]
        return json.dumps(obj), 200, {}

    def _act(self, object_id, verb):
        obj = self.objects.get(object_id)
        if obj is None:
            return self._error(404, "No such object")
        if verb == "cancel":
            if obj["status"] == "succeeded":
                return self._error(400, "You cannot cancel this PaymentIntent")
            obj["status"] = "canceled"
        elif verb == "expire":
            if obj["status"] != "open":
                return self._error(400, "Only open Checkout Sessions can be expired")
            obj["status"] = "expired"
        return json.dumps(obj), 200, {}

    def pay_session(self, session_id):
        """The customer pays on Stripe's hosted page."""
        session = self.objects[session_id]
        session.update(status="complete", payment_status="paid", payment_intent="pi_paid")

    @staticmethod
    def _error(status, message):
        error = {"error": {"type": "invalid_request_error", "message": message}}
        return json.dumps(error), status, {}

    def close(self):
        pass


@pytest.fixture
def stub(settings):
    http = StubStripeHTTP()
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe"}
    settings.STRIPE = {
        **settings.STRIPE,
        "API_KEY": "sk_test_stub",
        "WEBHOOK_SECRET": SECRET,
        "HTTP_CLIENT": http,
        "MAX_NETWORK_RETRIES": 0,
    }
    return http


def stripe_event(
    payment_id, *, event_type="payment_intent.succeeded", amount=20800, event_id="evt_s1"
):
    return {
        "id": event_id,
        "object": "event",
        "type": event_type,
        "api_version": "2024-06-20",
        "created": int(time.time()),
        "livemode": False,
        "data": {
            "object": {
                "id": "pi_123",
                "object": "payment_intent",
                "amount": amount,
                "currency": "eur",
                "status": "succeeded",
                "metadata": {"payment_id": str(payment_id)},
            }
        },
    }


def stripe_signed(payload, *, secret=SECRET, timestamp=None):
    body = json.dumps(payload)
    t = int(time.time()) if timestamp is None else timestamp
    sig = hmac.new(secret.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()
    return body.encode(), {"HTTP_STRIPE_SIGNATURE": f"t={t},v1={sig}"}


def test_create_payment_sends_idempotency_key_and_confirms(stub, customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="s-1", paymentMethod="pm_card_visa")

    assert response.status_code == 201, response.json()
    payment = Payment.objects.get()
    call = stub.requests[0]
    assert call["method"] == "post" and call["url"] == "https://api.stripe.com/v1/payment_intents"
    assert call["headers"]["Idempotency-Key"] == f"seatkeeper-payment-{payment.pk}"
    assert call["params"]["amount"] == "20800" and call["params"]["currency"] == "eur"
    assert (
        call["params"]["confirm"] == "true" and call["params"]["payment_method"] == "pm_card_visa"
    )
    assert (payment.status, payment.gateway, payment.gateway_reference) == (
        PaymentStatus.SUCCEEDED,
        "stripe",
        "pi_123",
    )
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED


def test_card_error_is_a_decline(stub, customer, flight):
    stub.decline = True
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, paymentMethod="pm_card_chargeDeclined")
    assert response.status_code == 402
    assert Payment.objects.get().failure_reason == "card_declined"


def test_pending_intent_confirmed_by_signed_webhook(stub, customer, flight):
    booking = hold(customer, flight)
    started = pay(api_client(customer), booking)
    assert started.status_code == 202
    assert started.json()["checkoutUrl"].startswith("https://checkout.stripe.com/")
    payment = Payment.objects.get()

    body, headers = stripe_signed(stripe_event(payment.pk))
    response = Client().post(
        "/api/payments/webhook", body, content_type="application/json", **headers
    )

    assert response.status_code == 200 and response.json()["duplicate"] is False
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED
    again = Client().post("/api/payments/webhook", body, content_type="application/json", **headers)
    assert again.json()["duplicate"] is True
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1


@pytest.mark.parametrize("tamper", ["secret", "old", "body", "missing"])
def test_stripe_webhook_verification_rejects(stub, customer, flight, tamper):
    stub.intent_status = "requires_payment_method"
    booking = hold(customer, flight)
    pay(api_client(customer), booking)
    payload = stripe_event(Payment.objects.get().pk)
    body, headers = stripe_signed(
        payload,
        secret="whsec_other" if tamper == "secret" else SECRET,
        timestamp=int(time.time()) - 301 if tamper == "old" else None,
    )
    if tamper == "body":
        body = body.replace(b"20800", b"20801")
    if tamper == "missing":
        headers = {}
    response = Client().post(
        "/api/payments/webhook", body, content_type="application/json", **headers
    )
    assert response.status_code == 400
    booking.refresh_from_db()
    assert booking.status == BookingStatus.HELD


def test_parse_webhook_maps_event(stub):
    gateway = StripeGateway()
    body, headers = stripe_signed(stripe_event(42))
    event = gateway.parse_webhook(
        body=body, headers={"Stripe-Signature": headers["HTTP_STRIPE_SIGNATURE"]}
    )
    assert (event.kind, event.payment_id, event.amount, event.currency, event.reference) == (
        "payment.succeeded",
        42,
        Decimal("208.00"),
        "EUR",
        "pi_123",
    )
    with pytest.raises(WebhookSignatureInvalid):
        gateway.parse_webhook(
            body=body + b" ", headers={"Stripe-Signature": headers["HTTP_STRIPE_SIGNATURE"]}
        )


def test_cancellation_refunds_through_stripe_with_idempotency_key(stub, customer, flight):
    booking = hold(customer, flight)
    pay(api_client(customer), booking, paymentMethod="pm_card_visa")

    result = cancel_booking(customer=customer, booking_id=booking.pk)

    refund = Refund.objects.get()
    assert result.refund.pk == refund.pk
    assert (refund.status, refund.amount, refund.gateway_reference) == (
        RefundStatus.SUCCEEDED,
        Decimal("208.00"),
        "re_456",
    )
    call = stub.requests[-1]
    assert call["url"] == "https://api.stripe.com/v1/refunds"
    assert call["params"] == {"payment_intent": "pi_123", "amount": "20800"}
    assert call["headers"]["Idempotency-Key"] == f"seatkeeper-refund-{refund.pk}"
