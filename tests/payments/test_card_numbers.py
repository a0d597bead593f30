"""Issue 11, item 6: card numbers.  The request fingerprint is a keyed HMAC; raw numbers are
taken only by the sandbox and only its test cards; real gateways take tokens; nothing stores
or logs more than the last four digits."""

import hashlib
import json
import logging

import pytest
from django.apps import apps
from django.core import serializers

from payments.gateways.sandbox import APPROVED_CARD, DECLINING_CARDS
from payments.models import Payment, SandboxCharge
from payments.paying import request_fingerprint
from tests.payments.helpers import api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


def unsalted(booking_id, method):
    canonical = json.dumps(
        {"bookingId": booking_id, "amount": None, "currency": None, "paymentMethod": method},
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def test_stored_fingerprint_is_a_keyed_hmac(customer, flight, settings):
    booking = hold(customer, flight)
    assert (
        pay(api_client(customer), booking, key="k", paymentMethod=APPROVED_CARD).status_code == 201
    )
    stored = Payment.objects.get().request_fingerprint
    # The review's attack: hash every candidate request without a key.  It no longer matches.
    assert stored != unsalted(booking.pk, APPROVED_CARD)
    same = dict(booking_id=booking.pk, amount=None, currency=None, payment_method=APPROVED_CARD)
    assert request_fingerprint(**same) == stored
    settings.PAYMENTS = {**settings.PAYMENTS, "FINGERPRINT_KEY": "another-key-" + "x" * 40}
    assert request_fingerprint(**same) != stored


def test_a_replay_still_matches_and_a_different_card_is_a_different_request(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    first = pay(client, booking, key="k", paymentMethod=APPROVED_CARD)
    again = pay(client, booking, key="k", paymentMethod=APPROVED_CARD)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again["Idempotent-Replayed"] == "true"
    other = pay(client, booking, key="k", paymentMethod="4000000000000002")
    assert other.status_code == 422


@pytest.mark.parametrize(
    "number", ["4111111111111111", "5555555555554444", "4242 4242 4242 4241", "12345", "pm_x"]
)
def test_the_sandbox_refuses_anything_but_its_test_cards(customer, flight, number):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="k", paymentMethod=number)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert response.json()["type"].endswith("/payment-method-refused")
    assert not Payment.objects.exists() and not SandboxCharge.objects.exists()


def test_a_real_gateway_refuses_raw_card_numbers(customer, flight, settings):
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe"}
    booking = hold(customer, flight)
    for number in (APPROVED_CARD, "4242-4242-4242-4242", "tok_visa", "pm_bad-chars!"):
        response = pay(api_client(customer), booking, key=f"k-{number}", paymentMethod=number)
        assert response.status_code == 400, number
        assert response.json()["type"].endswith("/payment-method-refused")
    assert not Payment.objects.exists()


def test_no_full_card_number_is_stored_or_logged(customer, flight, caplog):
    caplog.set_level(logging.DEBUG)
    declined = next(iter(DECLINING_CARDS))
    client = api_client(customer)
    paid = hold(customer, flight, seats=["12A"])
    refused = hold(customer, flight, seats=["12B"])
    assert pay(client, paid, key="a", paymentMethod=APPROVED_CARD).status_code == 201
    assert pay(client, paid, key="a", paymentMethod=APPROVED_CARD).status_code == 201  # replay
    assert pay(client, refused, key="b", paymentMethod=declined).status_code == 402
    assert pay(client, refused, key="c", paymentMethod="4111111111111111").status_code == 400

    rows = []
    for app in ("payments", "bookings"):
        for model in apps.get_app_config(app).get_models():
            rows.append(serializers.serialize("json", model.objects.all()))
    stored = "\n".join(rows)
    responses = json.dumps(list(Payment.objects.values_list("response_body", flat=True)))
    logs = "\n".join(r.getMessage() for r in caplog.records) + caplog.text
    for number in (APPROVED_CARD, declined, "4111111111111111"):
        for where, text in (("rows", stored), ("responses", responses), ("logs", logs)):
            assert number not in text, (number, where)
    # Control: the last four digits are kept, so the search above would have found more.
    assert set(SandboxCharge.objects.values_list("card_last4", flat=True)) == {
        APPROVED_CARD[-4:],
        declined[-4:],
    }
