"""Webhooks through real Celery workers and Redis: retries against a failing receiver, and a
worker SIGKILLed in the middle of a POST."""

import os
import signal
import time

import pytest
from celery.contrib.testing.worker import start_worker

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from config.celery import app
from partners.models import DeliveryStatus, WebhookDelivery
from partners.services import create_endpoint
from partners.tasks import resend_due_deliveries
from tests.bookings.confirming import hold_and_confirm
from tests.bookings.test_celery_worker import wait_for
from tests.celery_queue import purge_queue
from tests.factories import StaffFactory
from tests.pages.conftest import start_celery_worker, stop_celery_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
TYPES = ["booking.confirmed", "booking.cancelled", "refund.issued", "waitlist.offered"]


def make_events(customer, flight):
    """Two confirmations and a cancellation: three events, each relayed after commit."""
    hold_and_confirm(customer, flight, seats=("12A", "12B"))
    hold_and_confirm(customer, flight, seats=("13A",), names=("Cy Dao",))
    held = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["14A"]
    )
    cancel_hold(customer=customer, booking_id=held.pk)


def all_delivered(n):
    return lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == n


@pytest.fixture
def thread_worker():
    purge_queue()
    with start_worker(
        app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30
    ) as worker:
        yield worker


def test_failing_receiver_gets_each_event_once_across_retries(
    thread_worker, customer, flight, receiver
):
    endpoint = create_endpoint(owner=StaffFactory(), url=receiver.url, event_types=TYPES)
    receiver.secret, receiver.fail_first = endpoint.secret, 2

    make_events(customer, flight)  # commit -> relay kicked -> deliveries -> POSTs

    wait_for(all_delivered(3), timeout=60)
    deliveries = list(WebhookDelivery.objects.order_by("id"))
    assert [d.event_type for d in deliveries] == [
        "booking.confirmed",
        "booking.confirmed",
        "booking.cancelled",
    ]
    ids = {str(d.event_id) for d in deliveries}
    assert len(ids) == 3
    assert set(receiver.accepted) == ids  # each event processed once by the partner
    assert receiver.accepted_twice == [] and receiver.bad_signatures == 0
    assert dict(receiver.attempts) == dict.fromkeys(ids, 3)  # 500, 500, 200
    assert all(d.attempts == 3 and d.last_response_code == 200 for d in deliveries)


def test_worker_killed_mid_delivery_every_event_arrives_and_is_logged_delivered_once(
    customer, flight, receiver
):
    env = {
        "PARTNER_WEBHOOK_ALLOW_PRIVATE_URLS": "true",
        "PARTNER_WEBHOOK_STALE_AFTER_SECONDS": "2",
        "PARTNER_WEBHOOK_BACKOFF_BASE_SECONDS": "0.2",
    }
    endpoint = create_endpoint(owner=StaffFactory(), url=receiver.url, event_types=TYPES)
    # The first POST hangs: the worker is killed while it waits for the answer.
    receiver.secret, receiver.hang_first_seconds = endpoint.secret, 6
    worker = start_celery_worker("partners-killed", **env)
    restarted = None
    try:
        make_events(customer, flight)
        assert receiver.first_request_arrived.wait(60), worker.log.read_text()[-3000:]
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait(10)
        assert WebhookDelivery.objects.filter(status=DeliveryStatus.SENDING).count() == 1

        # Not purged: the outbox kicks still queued behind the hung delivery are this test's
        # own, and a restarted worker must find them (a purge here left the later events
        # unrelayed whenever the first relay ran before they committed: slow machine, busy suite).
        restarted = start_celery_worker("partners-restarted", purge=False, **env)
        # What beat does every 30 s: resend deliveries abandoned by a dead worker.  Sent every
        # 2 s here, not on every poll: a flood of sweeps would queue ahead of the deliveries.
        last_sweep = [0.0]

        def sweep() -> None:
            if time.monotonic() - last_sweep[0] >= 2:
                last_sweep[0] = time.monotonic()
                resend_due_deliveries.delay()

        wait_for(all_delivered(3), timeout=120, tick=sweep)
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
        if restarted:
            stop_celery_worker(restarted)

    deliveries = list(WebhookDelivery.objects.order_by("id"))
    ids = {str(d.event_id) for d in deliveries}
    assert len(deliveries) == 3 and len(ids) == 3  # one record per event and endpoint
    assert all(d.status == DeliveryStatus.DELIVERED for d in deliveries)
    time.sleep(receiver.hang_first_seconds)  # let the hung request finish on the receiver side
    assert set(receiver.accepted) == ids  # at least once each, deduped by the event id
    killed = [d for d in deliveries if d.attempts > 1]
    assert len(killed) == 1 and receiver.attempts[str(killed[0].event_id)] >= 2
    assert receiver.bad_signatures == 0
