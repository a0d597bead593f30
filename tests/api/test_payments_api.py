"""Paying over the API, the webhook, and the refund quote, through the project-wide error
handler: camelCase bodies, problem+json for every error, the payments throttle."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from flights.models import Flight
from kernel.errors import TooBusy
from payments.gateways.sandbox import SIGNATURE_HEADER, signature_header
from payments.models import Payment, PaymentStatus
from tests.api.conftest import DECLINED_CARD, GOOD_CARD, client_for, pay, problem
from tests.bookings.confirming import confirm

pytestmark = pytest.mark.django_db


def hold(customer, flight, seats=("12A", "12B")):
    return hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=list(seats),
        passenger_names=[f"Passenger {n}" for n in range(1, len(seats) + 1)],
    )


# --- paying (the gateway is called outside any transaction: transactional tests) -------------


@pytest.mark.django_db(transaction=True)
def test_card_payment_with_a_camel_case_body_confirms(sandbox_payments, customer, flight):
    booking = hold(customer, flight)
    # `paymentMethod` only reaches the service through the camelCase parser: were it dropped,
    # this would be a hosted checkout (202) instead of a card payment.
    response = pay(
        client_for(customer), booking.pk, amount="208.00", currency="eur", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 201, response.content
    assert response["Content-Type"] == "application/json"
    data = response.json()
    assert data["status"] == "SUCCEEDED" and data["bookingStatus"] == "CONFIRMED"
    assert (data["bookingId"], data["amount"], data["currency"]) == (booking.pk, "208.00", "EUR")
    assert data["checkoutUrl"] is None and data["paymentId"] == Payment.objects.get().pk
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


@pytest.mark.django_db(transaction=True)
def test_no_payment_method_is_a_hosted_checkout(sandbox_payments, customer, flight):
    response = pay(client_for(customer), hold(customer, flight).pk)
    assert response.status_code == 202
    assert response.json()["status"] == "PENDING"
    assert response.json()["checkoutUrl"].startswith("/sandbox/checkout/")


@pytest.mark.django_db(transaction=True)
def test_decline_is_402_problem_with_the_payment(sandbox_payments, customer, flight):
    booking = hold(customer, flight)
    data = problem(pay(client_for(customer), booking.pk, paymentMethod=DECLINED_CARD), 402)
    assert data["type"].endswith("/payment-declined")
    assert data["payment"]["status"] == "FAILED" and data["payment"]["bookingId"] == booking.pk
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


@pytest.mark.django_db(transaction=True)
def test_replay_and_key_reuse(sandbox_payments, customer, flight):
    booking = hold(customer, flight)
    client = client_for(customer)
    first = pay(client, booking.pk, key="k", paymentMethod=GOOD_CARD)
    again = pay(client, booking.pk, key="k", paymentMethod=GOOD_CARD)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    reused = problem(pay(client, booking.pk, key="k", amount="1.00", paymentMethod=GOOD_CARD), 422)
    assert reused["type"].endswith("/idempotency-key-reused")
    assert Payment.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_second_attempt_while_one_is_under_way_is_409(sandbox_payments, customer, flight):
    """Under way = a request still running (PROCESSING).  One merely waiting for the customer
    (PENDING) is superseded instead (tests/payments/test_stuck_payments.py)."""
    booking = hold(customer, flight)
    client = client_for(customer)
    checkout = pay(client, booking.pk, key="h1").json()
    Payment.objects.filter(pk=checkout["paymentId"]).update(status=PaymentStatus.PROCESSING)
    data = problem(pay(client, booking.pk, key="h2", paymentMethod=GOOD_CARD), 409)
    assert data["type"].endswith("/payment-in-progress")
    assert data["paymentId"] == checkout["paymentId"]
    assert data["checkoutUrl"] == checkout["checkoutUrl"]


@pytest.mark.django_db(transaction=True)
def test_agent_pays_on_behalf_of_a_customer(sandbox_payments, agent, customer, flight):
    booking = hold(customer, flight)
    response = pay(client_for(agent), booking.pk, paymentMethod=GOOD_CARD)
    assert response.status_code == 201, response.content
    payment = Payment.objects.get()
    # The agent pays, and the key is the agent's; the booking stays the customer's.
    assert (payment.customer, payment.booking.customer) == (agent, customer)
    assert payment.status == PaymentStatus.SUCCEEDED


# --- errors decided before any gateway call ----------------------------------------------------


def test_missing_idempotency_key_is_400(api, customer, flight):
    data = problem(pay(api, hold(customer, flight).pk, key=None, paymentMethod=GOOD_CARD), 400)
    assert data["type"].endswith("/idempotency-key-missing")
    assert not Payment.objects.exists()


def test_invalid_body_names_the_camel_case_field(api, customer, flight):
    booking = hold(customer, flight)
    data = problem(pay(api, booking.pk, paymentMethod="x" * 101, currency="euro"), 400)
    assert sorted(p["name"] for p in data["invalidParams"]) == ["currency", "paymentMethod"]
    assert not Payment.objects.exists()


def test_amount_mismatch_is_400_with_the_real_amount(api, customer, flight):
    data = problem(pay(api, hold(customer, flight).pk, amount="1.00"), 400)
    assert data["type"].endswith("/amount-mismatch")
    assert (data["amount"], data["currency"]) == ("208.00", "EUR")


def test_someone_elses_or_unknown_booking_is_404(api, other_customer, flight):
    theirs = hold(other_customer, flight)
    assert problem(pay(api, theirs.pk, paymentMethod=GOOD_CARD), 404)["type"].endswith(
        "/booking-not-found"
    )
    problem(pay(api, 987654321, paymentMethod=GOOD_CARD), 404)
    assert not Payment.objects.exists()


def test_expired_hold_is_410(api, customer, flight):
    booking = hold(customer, flight)
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert problem(pay(api, booking.pk, paymentMethod=GOOD_CARD), 410)["type"].endswith(
        "/hold-expired"
    )


def test_paid_booking_is_409_not_payable(api, customer, flight):
    booking = confirm(hold(customer, flight))
    data = problem(pay(api, booking.pk, paymentMethod=GOOD_CARD), 409)
    assert data["type"].endswith("/booking-not-payable")


def test_too_busy_is_503_with_retry_after(api, customer, flight, monkeypatch):
    def busy(**kwargs):
        raise TooBusy()

    monkeypatch.setattr("payments.api.pay_for_booking", busy)
    response = pay(api, hold(customer, flight).pk, paymentMethod=GOOD_CARD)
    assert problem(response, 503)["type"].endswith("/too-busy")
    assert int(response["Retry-After"]) >= 1


def test_payments_are_throttled_per_user(api, other_customer, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "payments": "2/min",
        },
    }
    assert [pay(api, 987654321).status_code for _ in range(2)] == [404, 404]
    throttled = pay(api, 987654321)
    assert problem(throttled, 429)["type"].endswith("/throttled")
    assert int(throttled["Retry-After"]) >= 1
    # Per user: someone else still gets through.
    assert pay(client_for(other_customer), 987654321).status_code == 404


# --- webhook -----------------------------------------------------------------------------------


def signed_event(payment_id: int | str = "0", secret: str = "whsec_api_tests"):
    import json
    import time

    body = json.dumps(
        {
            "id": "evt_api_1",
            # A failure: a success for a charge the sandbox never made is refused (400) since
            # the sandbox checks its ledger (tests/payments/test_forged_webhooks.py).
            "type": "payment.failed",
            "created": int(time.time()),
            "data": {
                "charge": "ch_x",
                "paymentId": str(payment_id),
                "amount": "1.00",
                "currency": "EUR",
                "declineCode": "",
            },
        }
    ).encode()
    return body, {
        f"HTTP_{SIGNATURE_HEADER.upper().replace('-', '_')}": signature_header(
            body=body, secret=secret
        )
    }


@pytest.mark.parametrize("path", ["/api/payments/webhook", "/api/payments/webhook/sandbox"])
def test_webhook_needs_no_user_but_a_signature(anon, sandbox_payments, path):
    body, headers = signed_event()
    ok = anon.post(path, body, content_type="application/json", **headers)
    assert ok.status_code == 200
    assert ok.json() == {"received": True, "eventId": "evt_api_1", "duplicate": False}
    again = anon.post(path, body, content_type="application/json", **headers)
    assert again.json()["duplicate"] is True
    forged_body, forged = signed_event(secret="not-the-secret")
    bad = problem(anon.post(path, forged_body, content_type="application/json", **forged), 400)
    assert bad["type"].endswith("/webhook-signature-invalid")


def test_webhook_for_an_unknown_gateway_is_404(anon):
    # No gateway of that name: no route at all (each gateway has its own, issue 31).
    data = problem(
        anon.post("/api/payments/webhook/paypal", b"{}", content_type="application/json"), 404
    )
    assert data["type"].endswith("/not-found")
    # A gateway that exists but is not in use here (the tests' is the sandbox): its route
    # answers 404 too, naming it.
    data = problem(
        anon.post("/api/payments/webhook/stripe", b"{}", content_type="application/json"), 404
    )
    assert data["type"].endswith("/gateway-not-found")


# --- refund quote ------------------------------------------------------------------------------


def test_refund_quote_of_a_hold(api, customer, flight):
    booking = hold(customer, flight)
    response = api.get(f"/api/bookings/{booking.pk}/refund-quote")
    assert response.status_code == 200
    assert response.json() == {
        "bookingId": booking.pk,
        "cancellable": True,
        "rule": "hold",
        "percent": 0,
        "refundAmount": "0.00",
        "paid": "0.00",
        "currency": "EUR",
        "reason": "Nothing has been paid yet; the seats are released at once.",
    }


@pytest.mark.django_db(transaction=True)
def test_refund_quote_follows_the_policy_and_changes_nothing(sandbox_payments, customer, flight):
    booking = hold(customer, flight)
    client = client_for(customer)
    assert pay(client, booking.pk, paymentMethod=GOOD_CARD).status_code == 201
    Flight.objects.filter(pk=flight.pk).update(departure_at=timezone.now() + timedelta(days=5))
    data = client.get(f"/api/bookings/{booking.pk}/refund-quote").json()
    assert (data["rule"], data["percent"], data["refundAmount"], data["paid"]) == (
        "partial",
        50,
        "104.00",
        "208.00",
    )
    assert data["cancellable"] is True
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=timezone.now() - timedelta(minutes=5),
        arrival_at=timezone.now() + timedelta(hours=1),
    )
    data = client.get(f"/api/bookings/{booking.pk}/refund-quote").json()
    assert (data["rule"], data["cancellable"], data["refundAmount"]) == ("refused", False, "0.00")
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_refund_quote_of_someone_elses_booking_is_404(api, other_customer, flight):
    theirs = hold(other_customer, flight)
    problem(api.get(f"/api/bookings/{theirs.pk}/refund-quote"), 404)
    problem(api.get("/api/bookings/987654321/refund-quote"), 404)
