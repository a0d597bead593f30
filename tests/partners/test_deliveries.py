"""Outbox events become signed webhook deliveries: one per event and endpoint, retried with
backoff, the same event id every time, and a partner hears only about its own bookings."""

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from kernel.models import OutboxEvent
from kernel.outbox import redeliver_event, relay_outbox
from partners import services
from partners.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from partners.services import attempt_delivery, create_endpoint, partner_event_id
from partners.signing import signature_header, verify_signature
from tests.bookings.confirming import confirm, hold_and_confirm
from tests.factories import (
    FlightFactory,
    StaffFactory,
    UserFactory,
    economy_only_layout,
    named_hold,
)

pytestmark = pytest.mark.django_db
EVERYTHING = ["booking.confirmed", "booking.cancelled", "refund.issued", "waitlist.offered"]


def until_settled(delivery_id, *, limit=10):
    """What the Celery task does, inline: attempt, wait out the backoff, attempt again."""
    results = []
    for _ in range(limit):
        result = attempt_delivery(delivery_id=delivery_id)
        if result is None:
            break
        results.append(result)
        if result.retry_in is None:
            break
        time.sleep(result.retry_in)
    return results


def test_one_delivery_per_event_and_endpoint_however_often_the_event_is_relayed(
    customer, flight, receiver
):
    staff = StaffFactory()
    first = create_endpoint(owner=staff, url=receiver.url, event_types=EVERYTHING)
    second = create_endpoint(owner=staff, url=receiver.url + "2", event_types=["booking.confirmed"])
    create_endpoint(owner=staff, url=receiver.url + "3", event_types=["booking.cancelled"])
    off = create_endpoint(owner=staff, url=receiver.url + "4", event_types=EVERYTHING)
    services.update_endpoint(endpoint=off, is_active=False)

    hold_and_confirm(customer, flight)
    relay_outbox()
    event = OutboxEvent.objects.get(event_type="booking.confirmed")
    redeliver_event(event_id=event.pk)
    redeliver_event(event_id=event.pk)
    services.queue_deliveries(event=event)  # even the consumer itself, called again

    deliveries = WebhookDelivery.objects.order_by("endpoint_id")
    assert [d.endpoint_id for d in deliveries] == [first.pk, second.pk]
    assert {d.event_id for d in deliveries} == {partner_event_id(event)}
    assert all(d.status == DeliveryStatus.PENDING for d in deliveries)


def test_receiver_failing_twice_gets_the_event_once_signed_with_backoff_between(
    customer, flight, receiver
):
    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.confirmed"]
    )
    receiver.secret, receiver.fail_first = endpoint.secret, 2
    booking = hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get()

    results = until_settled(delivery.pk)

    assert [r.response_code for r in results] == [500, 500, 200]
    assert [r.retry_in for r in results] == [0.2, 0.4, None]  # BASE * 2**(n-1)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_response_code) == (
        DeliveryStatus.DELIVERED,
        3,
        200,
    )
    assert receiver.attempts == {str(delivery.event_id): 3} and receiver.bad_signatures == 0
    body = receiver.accepted[str(delivery.event_id)]
    assert body["type"] == "booking.confirmed" and body["data"]["bookingId"] == booking.pk
    assert body["data"]["seats"] == ["12A", "12B"]
    # Delivered is final: another task for it (a duplicate message) sends nothing.
    assert attempt_delivery(delivery_id=delivery.pk) is None
    assert sum(receiver.attempts.values()) == 3


def test_signature_is_the_sandbox_scheme_over_the_exact_body(customer, flight, receiver):
    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.confirmed"]
    )
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get()
    body = services.delivery_body(delivery)
    assert json.loads(body)["id"] == str(delivery.event_id)
    receiver.secret = "whsec_wrong"
    until_settled(delivery.pk, limit=1)
    assert receiver.bad_signatures == 1 and not receiver.accepted  # verifiable only with ours
    header = signature_header(body=body, secret=endpoint.secret)
    verify_signature(body=body, header=header, secret=endpoint.secret, tolerance=300)


def test_gives_up_after_max_attempts_and_operators_can_send_again(
    customer, flight, receiver, partner_settings, django_capture_on_commit_callbacks
):
    partner_settings.PARTNER_WEBHOOKS = {**partner_settings.PARTNER_WEBHOOKS, "MAX_ATTEMPTS": 2}
    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.confirmed"]
    )
    receiver.secret, receiver.fail_first = endpoint.secret, 5
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get()
    results = until_settled(delivery.pk)
    assert [r.status for r in results] == [DeliveryStatus.PENDING, DeliveryStatus.FAILED]
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED and delivery.last_response_code == 500
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.retry_delivery(delivery_id=delivery.pk)
    assert len(callbacks) == 1  # the task is queued only after commit
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING


def test_unreachable_and_refused_urls(customer, flight, partner_settings):
    endpoint = create_endpoint(
        owner=StaffFactory(), url="http://127.0.0.1:9/closed", event_types=["booking.confirmed"]
    )
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get()
    first = attempt_delivery(delivery_id=delivery.pk)
    assert first.response_code is None and first.retry_in is not None
    assert "ConnectionError" in WebhookDelivery.objects.get().last_error

    # Production shape: a loopback URL is refused at delivery too (DNS may change later).
    partner_settings.PARTNER_WEBHOOKS = {
        **partner_settings.PARTNER_WEBHOOKS,
        "ALLOW_PRIVATE_URLS": False,
    }
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    refused = attempt_delivery(delivery_id=delivery.pk)
    assert refused.status == DeliveryStatus.FAILED and refused.retry_in is None
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).is_active


def test_partners_hear_only_about_their_own_bookings(flight, partner, receiver):
    other = UserFactory()
    mine_endpoint = create_endpoint(owner=partner, url=receiver.url, event_types=EVERYTHING)
    staff_endpoint = create_endpoint(owner=StaffFactory(), url=receiver.url, event_types=EVERYTHING)
    mine = hold_seats(
        customer=partner, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["14A"]
    )
    theirs = hold_seats(
        customer=other, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["14B"]
    )
    confirm(mine)
    cancel_hold(customer=other, booking_id=theirs.pk)
    relay_outbox()
    seen = set(WebhookDelivery.objects.values_list("endpoint_id", "event_type", "data__bookingId"))
    assert seen == {
        (mine_endpoint.pk, "booking.confirmed", mine.pk),
        (staff_endpoint.pk, "booking.confirmed", mine.pk),
        (staff_endpoint.pk, "booking.cancelled", theirs.pk),
    }


def test_stale_sending_rows_and_lost_retries_are_sent_again(
    customer, flight, receiver, monkeypatch
):
    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.confirmed"]
    )
    receiver.secret = endpoint.secret
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get()
    # A worker claimed it and died mid-POST.
    long_ago = timezone.now() - timedelta(hours=1)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.SENDING, attempts=1, updated_at=long_ago
    )
    sent = []
    monkeypatch.setattr(services, "dispatch_delivery", lambda pk, countdown=None: sent.append(pk))
    assert services.resend_due_deliveries() == 1
    assert sent == [delivery.pk]
    result = attempt_delivery(delivery_id=delivery.pk)
    assert result.status == DeliveryStatus.DELIVERED
    assert WebhookDelivery.objects.get().attempts == 2


def test_admin_sends_failed_deliveries_again_only_for_staff_who_may_change_endpoints(
    client, customer, flight, receiver
):
    from django.contrib.auth.models import Permission

    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.confirmed"]
    )
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.FAILED)
    action = {"action": "send_again", "_selected_action": [delivery.pk]}

    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_webhookdelivery"))
    client.force_login(viewer)
    client.post("/admin/partners/webhookdelivery/", action)
    assert WebhookDelivery.objects.get().status == DeliveryStatus.FAILED

    client.force_login(StaffFactory())
    client.post("/admin/partners/webhookdelivery/", action)
    assert WebhookDelivery.objects.get().status == DeliveryStatus.PENDING


@pytest.mark.django_db(transaction=True)
def test_every_partner_event_type_is_delivered_from_the_domain_services(settings, receiver):
    """Confirmation, cancellation with a refund, and a waitlist offer, each through the
    services that emit them; the relay turns each into a delivery."""
    from bookings.waitlist import join_waitlist
    from config.celery import app as celery_app
    from payments.cancellation import cancel_booking
    from tests.payments.helpers import GOOD_CARD, api_client, pay

    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"holds": "1000/min", "payments": "1000/min", "auth": "1/s"},
    }
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
        create_endpoint(owner=StaffFactory(), url=receiver.url, event_types=EVERYTHING)
        payer, waiter = UserFactory(), UserFactory()
        paid = named_hold(customer=payer, flight=flight, seats=["1A"])
        for seat in ["1B", "1C", "1D", "1E", "1F"]:
            hold_seats(
                customer=UserFactory(),
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=[seat],
            )
        assert pay(api_client(payer), paid, paymentMethod=GOOD_CARD).status_code == 201
        join_waitlist(customer=waiter, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1)
        cancel_booking(customer=payer, booking_id=paid.pk)  # refund, and 1A offered to waiter
        while relay_outbox().claimed:
            pass
    finally:
        celery_app.conf.task_always_eager = eager

    delivered = sorted(WebhookDelivery.objects.values_list("event_type", flat=True))
    assert delivered == sorted(EVERYTHING)
    offer = WebhookDelivery.objects.get(event_type="waitlist.offered").data
    refund = WebhookDelivery.objects.get(event_type="refund.issued").data
    assert offer["customerId"] == waiter.pk and offer["seats"] == ["1A"]
    assert refund["bookingId"] == paid.pk and refund["amount"] == str(paid.amount)
