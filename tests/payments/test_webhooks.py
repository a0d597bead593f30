"""POST /api/payments/webhook: signatures, recorded once, any order, 503 on lock timeout."""

import threading
import time
from datetime import timedelta

import pytest
import requests
from django.db import connections, transaction
from django.test import Client
from django.utils import timezone

from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments.gateways.sandbox import complete_checkout
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundReason,
    RefundStatus,
    SandboxRefund,
    WebhookEvent,
)
from tests.concurrency import run_concurrently
from tests.payments.helpers import (
    GOOD_CARD,
    WEBHOOK_PATH,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)

pytestmark = pytest.mark.django_db(transaction=True)


def pending_payment(customer, flight, seats=("12A", "12B")):
    """A booking the customer approved on the hosted checkout; the provider has the money and
    (delivery being off here) the test posts the webhook itself."""
    booking = hold(customer, flight, seats)
    assert pay(api_client(customer), booking, key=f"k-{booking.pk}").status_code == 202
    payment = Payment.objects.get(booking=booking)
    complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
    return booking, payment


def assert_unchanged(booking):
    booking.refresh_from_db()
    assert booking.status == BookingStatus.HELD
    assert not WebhookEvent.objects.exists()
    assert not OutboxEvent.objects.filter(event_type="booking.confirmed").exists()
    assert Payment.objects.get(booking=booking).status == PaymentStatus.PENDING


def test_signed_success_confirms_and_a_duplicate_is_acknowledged_and_ignored(customer, flight):
    booking, payment = pending_payment(customer, flight)
    body, headers = signed(sandbox_event(payment))

    first = post_webhook(Client(), body, headers)
    again = post_webhook(Client(), body, headers)

    assert first.status_code == again.status_code == 200
    assert first.json()["duplicate"] is False and again.json()["duplicate"] is True
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1
    record = WebhookEvent.objects.get()
    assert record.processed_at is not None and "SUCCEEDED" in record.outcome


@pytest.mark.parametrize(
    "tamper",
    ["body", "secret", "old", "missing", "garbage-header"],
)
def test_bad_signatures_are_400_and_change_nothing(customer, flight, tamper):
    booking, payment = pending_payment(customer, flight)
    payload = sandbox_event(payment)
    if tamper == "secret":
        body, headers = signed(payload, secret="whsec_wrong")
    elif tamper == "old":
        body, headers = signed(payload, timestamp=int(time.time()) - 301)
    else:
        body, headers = signed(payload)
    if tamper == "body":
        body = body.replace(b'"payment.succeeded"', b'"payment.succeeded" ')
    if tamper == "missing":
        headers = {}
    if tamper == "garbage-header":
        headers = {"Seatkeeper-Signature": "nonsense"}

    response = post_webhook(Client(), body, headers)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"].endswith("/webhook-signature-invalid")
    assert_unchanged(booking)


def test_timestamp_just_inside_tolerance_is_accepted(customer, flight):
    _, payment = pending_payment(customer, flight)
    body, headers = signed(sandbox_event(payment), timestamp=int(time.time()) - 290)
    assert post_webhook(Client(), body, headers).status_code == 200


def test_late_failure_never_undoes_success(customer, flight):
    booking, payment = pending_payment(customer, flight)
    for event in (
        sandbox_event(payment, event_id="e1"),
        sandbox_event(payment, kind="payment.failed", event_id="e2"),
    ):
        assert post_webhook(Client(), *signed(event)).status_code == 200
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    assert WebhookEvent.objects.count() == 2


def test_success_after_an_earlier_failure_still_confirms(customer, flight):
    booking, payment = pending_payment(customer, flight)
    post_webhook(Client(), *signed(sandbox_event(payment, kind="payment.failed", event_id="e1")))
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.FAILED
    post_webhook(Client(), *signed(sandbox_event(payment, event_id="e2")))
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED


@pytest.mark.parametrize("swept", [False, True])
def test_success_after_expiry_is_refunded_in_full(customer, flight, swept):
    booking, payment = pending_payment(customer, flight)
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    if swept:
        assert expire_holds() == 1

    response = post_webhook(Client(), *signed(sandbox_event(payment)))

    assert response.status_code == 200
    booking.refresh_from_db()
    assert booking.status == BookingStatus.EXPIRED
    assert not Seat.objects.filter(
        sale=flight.sale, status__in=[SeatStatus.HELD, SeatStatus.SOLD]
    ).exists()
    refund = Refund.objects.get()
    assert (refund.status, refund.reason, refund.amount) == (
        RefundStatus.SUCCEEDED,
        RefundReason.LATE_PAYMENT,
        payment.amount,
    )
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert SandboxRefund.objects.get().amount == payment.amount
    issued = OutboxEvent.objects.get(event_type="refund.issued")
    assert issued.payload["refundId"] == refund.pk and issued.payload["amount"] == "208.00"
    # The engine names the sale; partners are told the flight (partners.services.public_payload).
    assert issued.payload["bookingId"] == booking.pk and issued.payload["saleId"] == flight.sale_id
    assert not OutboxEvent.objects.filter(event_type="booking.confirmed").exists()
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    assert (inventory.held, inventory.sold) == (0, 0)
    assert check_inventory(sale_id=flight.sale_id) == []
    # Redelivery of the same success changes nothing and refunds nothing twice.
    post_webhook(Client(), *signed(sandbox_event(payment, event_id="evt_again")))
    assert Refund.objects.count() == 1 and SandboxRefund.objects.count() == 1


def test_unknown_payment_and_wrong_amount_are_recorded_and_refused(customer, flight):
    """The sandbox checks a success against its own ledger: another payment's charge or
    another amount contradicts it, so the event is refused (400), recorded, and not applied."""
    booking, payment = pending_payment(customer, flight)
    stranger = sandbox_event(payment, event_id="e1")
    stranger["data"]["paymentId"] = str(payment.pk + 1000)
    cheap = sandbox_event(payment, event_id="e2", amount="1.00")
    for event in (stranger, cheap):
        assert post_webhook(Client(), *signed(event)).status_code == 400
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    outcomes = dict(WebhookEvent.objects.values_list("event_id", "outcome"))
    assert outcomes["e1"].endswith("belongs to another payment")
    assert outcomes["e2"].startswith("refused: ") and "is for 208.00 EUR" in outcomes["e2"]


@pytest.mark.concurrency
def test_same_webhook_five_times_concurrently_over_http(customer, flight, live_server):
    booking, payment = pending_payment(customer, flight)
    body, headers = signed(sandbox_event(payment))
    headers["Content-Type"] = "application/json"
    url = live_server.url + WEBHOOK_PATH

    outcomes = run_concurrently(
        [lambda: requests.post(url, data=body, headers=headers, timeout=30) for _ in range(5)]
    )

    assert not outcomes.errors
    assert [r.status_code for r in outcomes.results] == [200] * 5
    assert sorted(r.json()["duplicate"] for r in outcomes.results) == [
        False,
        True,
        True,
        True,
        True,
    ]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1
    assert WebhookEvent.objects.count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.concurrency
def test_lock_timeout_answers_503_and_a_retry_succeeds(customer, flight, settings):
    settings.PAYMENTS = {**settings.PAYMENTS, "WEBHOOK_LOCK_TIMEOUT_MS": 300}
    booking, payment = pending_payment(customer, flight)
    locked, release = threading.Event(), threading.Event()

    def hold_booking_lock():
        try:
            with transaction.atomic():
                Booking.objects.select_for_update().get(pk=booking.pk)
                locked.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_booking_lock)
    holder.start()
    assert locked.wait(10)
    body, headers = signed(sandbox_event(payment))
    started = time.monotonic()
    busy = post_webhook(Client(), body, headers)
    elapsed = time.monotonic() - started
    release.set()
    holder.join(10)

    assert busy.status_code == 503 and busy["Retry-After"]
    assert busy["Content-Type"] == "application/problem+json"
    assert elapsed < 3
    assert not WebhookEvent.objects.exists()  # rolled back with the attempt: the retry counts
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD

    retry = post_webhook(Client(), body, headers)
    assert retry.status_code == 200 and retry.json()["duplicate"] is False
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
