"""The sandbox provider end to end: hosted checkout page, webhooks over real HTTP to a live
server from the Celery task, retries with backoff, and the misbehaviour switches."""

import pytest
from django.test import Client

from bookings.models import Booking, BookingStatus
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments.gateways import sandbox_delivery
from payments.models import Payment, PaymentStatus, SandboxCharge, SandboxEvent, WebhookEvent
from payments.tasks import deliver_sandbox_event
from tests.payments import flaky_urls
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


def start_checkout(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key=f"c-{booking.pk}")
    assert response.status_code == 202
    return booking, response.json()["checkoutUrl"]


def test_hosted_checkout_approve_confirms_via_webhook_over_http(
    customer, flight, deliver_to_live_server
):
    booking, url = start_checkout(customer, flight)
    browser = Client()
    page = browser.get(url)
    assert page.status_code == 200
    assert "€208.00".encode() in page.content and b"4000000000000002" in page.content

    done = browser.post(url, {"action": "approve", "card_number": GOOD_CARD}, follow=True)

    assert b"Payment approved" in done.content and b"is <strong>paid</strong>" in done.content
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CONFIRMED
    event = SandboxEvent.objects.get()
    assert (event.attempts, event.last_status) == (1, 200) and event.delivered_at is not None
    assert WebhookEvent.objects.get().event_id == event.id
    assert Payment.objects.get().status == PaymentStatus.SUCCEEDED
    assert check_inventory(sale_id=flight.sale_id) == []
    # The page cannot be completed twice.
    browser.post(url, {"action": "decline"})
    assert SandboxEvent.objects.count() == 1


@pytest.mark.parametrize(
    ("form", "decline_code"),
    [
        ({"action": "decline"}, "customer_declined"),
        ({"action": "approve", "card_number": "4000000000009995"}, "insufficient_funds"),
        ({"action": "approve", "card_number": "1234"}, "incorrect_number"),
    ],
)
def test_hosted_checkout_decline_fails_the_payment(
    customer, flight, deliver_to_live_server, form, decline_code
):
    booking, url = start_checkout(customer, flight)
    done = Client().post(url, form, follow=True)
    assert b"Payment declined" in done.content
    payment = Payment.objects.get()
    assert (payment.status, payment.failure_reason) == (PaymentStatus.FAILED, decline_code)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_checkout_page_rejects_a_missing_choice(customer, flight):
    _, url = start_checkout(customer, flight)
    response = Client().post(url, {"action": "approve", "card_number": ""})
    assert response.status_code == 400 and b"Enter a card number" in response.content
    assert SandboxCharge.objects.get().status == "requires_action"
    assert Client().get("/sandbox/checkout/ch_nope").status_code == 404


def test_non_2xx_is_retried_with_backoff_until_delivered(
    customer, flight, deliver_to_live_server, settings, monkeypatch
):
    settings.ROOT_URLCONF = "tests.payments.flaky_urls"
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "WEBHOOK_URL": deliver_to_live_server.url + "/flaky-webhook",
    }
    flaky_urls.FAILURES_LEFT["count"] = 2
    countdowns = []
    original = deliver_sandbox_event.retry
    monkeypatch.setattr(
        deliver_sandbox_event,
        "retry",
        lambda **kw: countdowns.append(kw["countdown"]) or original(**kw),
    )

    booking = hold(customer, flight)
    assert pay(api_client(customer), booking, paymentMethod=GOOD_CARD).status_code == 201
    event = SandboxEvent.objects.get()

    assert (event.attempts, event.last_status) == (3, 200)
    assert countdowns == [2, 4]  # exponential backoff from BACKOFF_BASE_SECONDS
    assert WebhookEvent.objects.count() == 1


def test_delivery_gives_up_after_max_retries(customer, flight, deliver_to_live_server, settings):
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "WEBHOOK_URL": deliver_to_live_server.url + "/no-such-webhook",
    }
    booking = hold(customer, flight)
    assert pay(api_client(customer), booking, paymentMethod=GOOD_CARD).status_code == 201
    event = SandboxEvent.objects.get()
    assert (event.attempts, event.last_status, event.delivered_at) == (4, 404, None)
    assert [sandbox_delivery.backoff_seconds(n) for n in range(12)][-1] == 600  # capped


def test_duplicate_deliveries_are_acknowledged_and_ignored(
    customer, flight, deliver_to_live_server, settings
):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DUPLICATE_DELIVERIES": 2}
    booking, url = start_checkout(customer, flight)
    Client().post(url, {"action": "approve", "card_number": GOOD_CARD})
    event = SandboxEvent.objects.get()
    assert (event.attempts, event.last_status) == (3, 200)
    assert WebhookEvent.objects.count() == 1
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_failure_sent_after_success_does_not_undo_it(
    customer, flight, deliver_to_live_server, settings
):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "FAIL_AFTER_SUCCESS": True}
    booking, url = start_checkout(customer, flight)
    Client().post(url, {"action": "approve", "card_number": GOOD_CARD})
    assert list(SandboxEvent.objects.values_list("event_type", "last_status")) == [
        ("payment.succeeded", 200),
        ("payment.failed", 200),
    ]
    assert WebhookEvent.objects.count() == 2
    assert Payment.objects.get().status == PaymentStatus.SUCCEEDED
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_delay_switch_schedules_delivery_later(
    customer, flight, deliver_to_live_server, settings, monkeypatch
):
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELAY_SECONDS": 7}
    scheduled = []
    original = deliver_sandbox_event.apply_async
    monkeypatch.setattr(
        deliver_sandbox_event,
        "apply_async",
        lambda args, countdown=None: (
            scheduled.append(countdown) or original(args, countdown=countdown)
        ),
    )
    booking, url = start_checkout(customer, flight)
    Client().post(url, {"action": "approve", "card_number": GOOD_CARD})
    assert scheduled == [7]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
