"""Issue 11, item 7: no payment stays stuck.  A Stripe `requires_action` answer carries what
the client needs; a new attempt supersedes one left waiting (cancelled at the gateway first,
never charged twice); a payment left PROCESSING by a crash is reconciled by a beat job by our
outbound idempotency key, so its Idempotency-Key stops answering 409."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from kernel.schedules import registered_schedules
from payments import paying, reconciliation
from payments.gateways.sandbox import complete_checkout
from payments.models import Payment, PaymentStatus, SandboxCharge, SandboxChargeStatus
from payments.tasks import reconcile_stuck_payments_task
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay
from tests.payments.test_stripe import stub  # noqa: F401  (the stubbed Stripe HTTP client)

pytestmark = pytest.mark.django_db(transaction=True)


def later(minutes=5):
    return timezone.now() + timedelta(minutes=minutes)


# --- what the client needs ---------------------------------------------------------------------


def test_three_d_secure_answers_202_with_the_client_secret(stub, customer, flight):  # noqa: F811
    stub.intent_status = "requires_action"
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="3ds", paymentMethod="pm_card_threeDSecure2")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["clientSecret"] == "pi_123_secret_abc" and body["status"] == "PENDING"
    assert Payment.objects.get().client_secret == "pi_123_secret_abc"


def test_without_a_card_stripe_gives_a_checkout_session_url(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="hosted")
    assert response.status_code == 202
    assert response.json()["checkoutUrl"] == "https://checkout.stripe.com/c/pay/cs_test_1"
    session_call = stub.requests[-1]
    assert session_call["url"].endswith("/v1/checkout/sessions")
    assert session_call["params"]["payment_intent_data[metadata][payment_id]"] == str(
        Payment.objects.get().pk
    )
    assert session_call["params"]["success_url"].endswith(f"/bookings/{booking.pk}/")


def test_the_pages_pay_button_goes_to_stripe_checkout(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    client = Client()
    client.force_login(customer)
    response = client.post(
        f"/bookings/{booking.pk}/pay/", {"idempotency_key": "page-key-0123456789"}
    )
    assert response.status_code == 302
    assert response["Location"] == "https://checkout.stripe.com/c/pay/cs_test_1"


# --- superseding an attempt left waiting ------------------------------------------------------


def test_a_card_after_an_abandoned_checkout_pays_once(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    client = api_client(customer)
    assert pay(client, booking, key="first").status_code == 202
    old = Payment.objects.get()
    response = pay(client, booking, key="second", paymentMethod="pm_card_visa")
    assert response.status_code == 201, response.content
    assert stub.objects[old.gateway_reference]["status"] == "expired"  # cancelled at Stripe
    old.refresh_from_db()
    assert old.status == PaymentStatus.FAILED and "superseded" in old.failure_reason
    assert Payment.objects.filter(status=PaymentStatus.SUCCEEDED).count() == 1
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    # The first key still replays its own (stored) answer.
    assert pay(client, booking, key="first").status_code == 202


def test_a_new_attempt_after_the_customer_did_pay_is_not_charged(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    client = api_client(customer)
    assert pay(client, booking, key="first").status_code == 202
    old = Payment.objects.get()
    stub.pay_session(old.gateway_reference)  # paid on Stripe; the webhook has not arrived yet
    intents_before = sum(1 for r in stub.requests if r["url"].endswith("/v1/payment_intents"))
    response = pay(client, booking, key="second", paymentMethod="pm_card_visa")
    assert response.status_code == 409
    assert response.json()["type"].endswith("/booking-not-payable")
    intents_after = sum(1 for r in stub.requests if r["url"].endswith("/v1/payment_intents"))
    assert intents_after == intents_before  # no second charge was even attempted
    old.refresh_from_db()
    assert (old.status, old.gateway_reference) == (PaymentStatus.SUCCEEDED, "pi_paid")
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_a_card_after_a_stuck_three_d_secure_cancels_the_old_intent(stub, customer, flight):  # noqa: F811
    stub.intent_status = "requires_action"
    booking = hold(customer, flight)
    client = api_client(customer)
    assert pay(client, booking, key="a", paymentMethod="pm_card_threeDSecure2").status_code == 202
    old = Payment.objects.get()
    stub.intent_status = "succeeded"
    assert pay(client, booking, key="b", paymentMethod="pm_card_visa").status_code == 201
    assert stub.objects[old.gateway_reference]["status"] == "canceled"
    assert any(r["url"].endswith(f"/{old.gateway_reference}/cancel") for r in stub.requests)


def test_sandbox_a_new_attempt_cancels_the_old_hosted_checkout(customer, flight):
    booking = hold(customer, flight)
    client = api_client(customer)
    assert pay(client, booking, key="first").status_code == 202
    old = Payment.objects.get()
    # Control of the bug: before, this answered 409 payment-in-progress forever.
    assert pay(client, booking, key="second", paymentMethod=GOOD_CARD).status_code == 201
    charge = complete_checkout(charge_id=old.gateway_reference, card_number=GOOD_CARD, approve=True)
    assert charge.status == SandboxChargeStatus.CANCELED  # the old page can no longer take money
    assert SandboxCharge.objects.filter(status=SandboxChargeStatus.SUCCEEDED).count() == 1


def test_a_processing_attempt_is_not_superseded(customer, flight):
    """A request still running (PROCESSING) is not cancelled under its feet."""
    booking = hold(customer, flight)
    Payment.objects.create(
        booking=booking,
        sale_id=booking.sale_id,
        customer=customer,
        idempotency_key="running",
        request_fingerprint="x",
        amount=booking.amount,
        currency=booking.currency,
        gateway="sandbox",
        created_at=timezone.now(),
        updated_at=timezone.now(),
    )
    response = pay(api_client(customer), booking, key="other", paymentMethod=GOOD_CARD)
    assert response.status_code == 409
    assert response.json()["type"].endswith("/payment-in-progress")


# --- reconciling a crash between the steps ----------------------------------------------------


def crash_in(monkeypatch, name):
    original = getattr(paying, name)

    def crash(*args, **kwargs):
        monkeypatch.setattr(paying, name, original)  # once: the process "restarts"
        raise SystemExit("worker killed")

    monkeypatch.setattr(paying, name, crash)


@pytest.mark.parametrize("gateway", ["sandbox", "stripe"])
def test_a_crash_after_the_charge_is_reconciled_by_idempotency_key(
    request, customer, flight, monkeypatch, gateway
):
    stub = request.getfixturevalue("stub") if gateway == "stripe" else None  # noqa: F811
    method = "pm_card_visa" if stub else GOOD_CARD
    booking = hold(customer, flight)
    client = api_client(customer)
    crash_in(monkeypatch, "apply_charge_result")  # charged, then the process died
    with pytest.raises(SystemExit):
        paying.pay_for_booking(
            customer=customer, booking_id=booking.pk, idempotency_key="k", payment_method=method
        )
    payment = Payment.objects.get()
    assert payment.status == PaymentStatus.PROCESSING
    stuck = pay(client, booking, key="k", paymentMethod=method)
    assert stuck.status_code == 409
    assert stuck.json()["type"].endswith("/idempotency-key-in-flight")

    assert reconciliation.reconcile_stuck_payments(now=timezone.now()) == 0  # too fresh to judge
    assert reconciliation.reconcile_stuck_payments(now=later()) == 1

    payment.refresh_from_db()
    assert payment.status == PaymentStatus.SUCCEEDED
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    replay = pay(client, booking, key="k", paymentMethod=method)
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    if stub:
        creates = [r for r in stub.requests if r["url"].endswith("/v1/payment_intents")]
        assert len(creates) == 2  # the original and the reconciliation...
        assert {r["headers"]["Idempotency-Key"] for r in creates} == {
            f"seatkeeper-payment-{payment.pk}"
        }
        assert len({o for o in stub.objects if o.startswith("pi_")}) == 1  # ...one charge
    else:
        assert SandboxCharge.objects.count() == 1


def test_a_crash_after_the_outcome_but_before_the_answer_replays_at_once(
    customer, flight, monkeypatch
):
    """Found by bench/node_loss.py: a web node killed between step 3's commit and storing the
    answer left a SUCCEEDED payment whose key said "still running" forever (reconciliation
    only looks at PROCESSING).  The retry now stores the settled row's answer and replays it."""
    booking = hold(customer, flight)
    client = api_client(customer)
    crash_in(monkeypatch, "store_response")  # confirmed, then the process died
    with pytest.raises(SystemExit):
        paying.pay_for_booking(
            customer=customer, booking_id=booking.pk, idempotency_key="k", payment_method=GOOD_CARD
        )
    payment = Payment.objects.get()
    assert payment.status == PaymentStatus.SUCCEEDED and payment.response_status is None
    assert reconciliation.reconcile_stuck_payments(now=later()) == 0  # nothing for beat to do

    replay = pay(client, booking, key="k", paymentMethod=GOOD_CARD)
    assert replay.status_code == 201, replay.content
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json()["bookingStatus"] == "CONFIRMED"
    payment.refresh_from_db()
    assert payment.response_status == 201
    assert pay(client, booking, key="k", paymentMethod="4000000000000002").status_code == 422
    assert SandboxCharge.objects.count() == 1  # charged once


def test_control_a_payment_still_processing_keeps_answering_in_flight(
    customer, flight, monkeypatch
):
    """The replay writes an answer only for a settled payment: one still PROCESSING (its
    request may be running) says 409 until it settles."""
    booking = hold(customer, flight)
    crash_in(monkeypatch, "apply_charge_result")  # charged, outcome not applied
    with pytest.raises(SystemExit):
        paying.pay_for_booking(
            customer=customer, booking_id=booking.pk, idempotency_key="k", payment_method=GOOD_CARD
        )
    response = pay(api_client(customer), booking, key="k", paymentMethod=GOOD_CARD)
    assert response.status_code == 409
    assert response.json()["type"].endswith("/idempotency-key-in-flight")
    payment = Payment.objects.get()
    assert payment.status == PaymentStatus.PROCESSING and payment.response_status is None


def test_a_crash_before_the_charge_fails_the_payment_and_frees_the_booking(
    customer, flight, monkeypatch
):
    booking = hold(customer, flight)
    client = api_client(customer)
    crash_in(monkeypatch, "charge")
    with pytest.raises(SystemExit):
        paying.pay_for_booking(
            customer=customer, booking_id=booking.pk, idempotency_key="k", payment_method=GOOD_CARD
        )
    assert reconcile_stuck_payments_task.apply().result == 0  # the beat tick: too fresh yet
    assert reconciliation.reconcile_stuck_payments(now=later()) == 1
    payment = Payment.objects.get()
    assert payment.status == PaymentStatus.FAILED
    assert not SandboxCharge.objects.exists()
    assert pay(client, booking, key="k", paymentMethod=GOOD_CARD).status_code == 502
    assert pay(client, booking, key="new", paymentMethod=GOOD_CARD).status_code == 201


def test_the_reconciliation_is_on_the_beat_schedule():
    assert any(
        s.task == "payments.tasks.reconcile_stuck_payments_task" and s.every_seconds <= 60
        for s in registered_schedules()
    )
    # Installed by payments/migrations/0005 (tests/bookings/test_schedules.py checks them all).
