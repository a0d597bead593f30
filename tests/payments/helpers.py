"""Helpers shared by the payments tests."""

from __future__ import annotations

import json
import time

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bookings.services import hold_seats
from payments.gateways.sandbox import SIGNATURE_HEADER, signature_header

WEBHOOK_SECRET = "whsec_test_secret"
WEBHOOK_PATH = "/api/payments/webhook"
GOOD_CARD = "4242424242424242"


def api_client(user) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def hold(customer, flight, seats=("12A", "12B")):
    return hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=list(seats),
        passenger_names=[f"Passenger {n}" for n in range(1, len(seats) + 1)],
    )


def pay(client, booking, key="key-1", **body):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(f"/api/bookings/{booking.pk}/payments", body, format="json", **headers)


def sandbox_event(payment, kind="payment.succeeded", event_id="evt_1", amount=None):
    return {
        "id": event_id,
        "type": kind,
        "created": int(time.time()),
        "data": {
            "charge": payment.gateway_reference or "ch_test",
            "paymentId": str(payment.pk),
            "amount": str(amount if amount is not None else payment.amount),
            "currency": payment.currency,
            "declineCode": "" if kind == "payment.succeeded" else "card_declined",
        },
    }


def signed(payload: dict, *, secret: str = WEBHOOK_SECRET, timestamp: int | None = None):
    body = json.dumps(payload).encode()
    return body, {SIGNATURE_HEADER: signature_header(body=body, secret=secret, timestamp=timestamp)}


def post_webhook(client, body: bytes, headers: dict):
    extra = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
    return client.post(WEBHOOK_PATH, body, content_type="application/json", **extra)
