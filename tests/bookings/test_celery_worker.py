"""End to end through Redis and a real Celery worker: commit -> kick -> relay -> consumers ->
e-mail task -> mail.  The worker runs in a thread of this process with its own database
connection, so the tests use real transactions."""

import time
from collections.abc import Callable

import pytest
from celery.contrib.testing.worker import start_worker
from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from bookings.models import Notification, NotificationStatus, Ticket
from config.celery import app
from kernel.events import register_consumer, unregister_consumer
from kernel.models import OutboxEvent, ProcessedEvent
from kernel.tasks import redeliver_event, relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.celery_queue import purge_queue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
# Receipts of bookings' own consumers (partners' webhook consumer has its own tests).
# The engine's own consumers' receipts (partners' deliveries and the waiting room's sell-out
# check are other apps' consumers of the same events, tested with their apps).
BOOKINGS_RECEIPTS = ProcessedEvent.objects.exclude(consumer__startswith="partners.").exclude(
    consumer__startswith="waitroom."
)


def wait_for(condition: Callable[[], bool], *, timeout: float = 30, tick: Callable | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if tick:
            tick()
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def worker():
    broker = app.conf.broker_url
    assert broker.startswith("redis://"), f"these tests need the real broker, not {broker}"
    # Kicks left behind by other transactional tests (no worker was running then).
    purge_queue()
    with start_worker(
        app, pool="solo", perform_ping_check=False, loglevel="WARNING", shutdown_timeout=30
    ) as worker:
        yield worker


def test_celery_runs_with_the_reliability_settings():
    conf = app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_prefetch_multiplier == 1
    assert conf.accept_content == ["json"] and conf.task_serializer == "json"
    assert conf.task_time_limit > conf.task_soft_time_limit > 0
    assert conf.beat_scheduler == "kernel.beat:SingleBeatScheduler"
    assert conf.broker_url == django_settings.REDIS_URL


def test_a_confirmed_booking_gets_its_tickets_and_email_through_the_worker(
    worker, customer, flight, mailoutbox
):
    booking = hold_and_confirm(customer, flight)  # commits; its on_commit kick goes to Redis

    wait_for(lambda: len(mailoutbox) == 1)

    assert Ticket.objects.filter(booking=booking).count() == 2
    assert OutboxEvent.objects.get(event_type="booking.confirmed").published_at is not None
    assert Notification.objects.get().status == NotificationStatus.SENT
    message = mailoutbox[0]
    assert message.subject == f"Your tickets for flight {flight.code}"
    assert len(message.attachments) == 2


def test_duplicate_deliveries_through_the_broker_have_effects_once(
    worker, customer, flight, mailoutbox
):
    booking = hold_and_confirm(customer, flight)
    wait_for(lambda: len(mailoutbox) == 1)
    event = OutboxEvent.objects.get(event_type="booking.confirmed")

    # Three more deliveries of the same event: two redeliveries, and the relay finding it
    # unpublished again (as after a crash between delivery and the publish mark).
    redeliver_event.delay(event.pk)
    redeliver_event.delay(event.pk)
    OutboxEvent.objects.filter(pk=event.pk).update(published_at=None)
    relay_outbox.delay()
    wait_for(lambda: OutboxEvent.objects.filter(pk=event.pk, published_at__isnull=False).exists())
    # A sentinel behind them in the queue: once it ran, so had they (one solo worker, FIFO).
    with transaction.atomic():
        sentinel = OutboxEvent.objects.create(
            sale_id=0,
            aggregate_type="test",
            aggregate_id="0",
            event_type="test.sentinel",
            payload={},
            created_at=timezone.now(),
            published_at=timezone.now(),
        )
    register_consumer("test.sentinel", name="test.sentinel")(lambda event: None)
    try:
        redeliver_event.delay(sentinel.pk)
        wait_for(lambda: ProcessedEvent.objects.filter(consumer="test.sentinel").exists())
    finally:
        unregister_consumer("test.sentinel")

    assert Ticket.objects.filter(booking=booking).count() == 2
    assert Notification.objects.count() == 1
    assert len(mailoutbox) == 1
    assert BOOKINGS_RECEIPTS.filter(event=event).count() == 2


def test_a_consumer_raising_once_is_retried_by_the_next_tick_with_effects_once(
    worker, customer, flight, mailoutbox
):
    failures = []

    @register_consumer("booking.confirmed", name="test.worker_flaky")
    def flaky(event):
        if not failures:
            failures.append(event.pk)
            raise RuntimeError("downstream hiccup")

    try:
        booking = hold_and_confirm(customer, flight)
        event = OutboxEvent.objects.get(event_type="booking.confirmed")
        wait_for(lambda: OutboxEvent.objects.filter(pk=event.pk, attempts=1).exists())
        assert OutboxEvent.objects.get(pk=event.pk).published_at is None
        # What beat does every second: send the relay task again.
        wait_for(
            lambda: OutboxEvent.objects.filter(pk=event.pk, published_at__isnull=False).exists(),
            tick=lambda: relay_outbox.delay(),
        )
        wait_for(lambda: len(mailoutbox) == 1)
    finally:
        unregister_consumer("test.worker_flaky")

    assert failures == [event.pk]
    assert Ticket.objects.filter(booking=booking).count() == 2
    assert Notification.objects.count() == 1
    assert BOOKINGS_RECEIPTS.filter(event=event).count() == 3
