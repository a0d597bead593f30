"""The relay against real concurrency: separate connections, real row locks."""

import threading
from datetime import timedelta

import pytest
from django.db import connections, transaction
from django.utils import timezone

from bookings.models import Notification, Ticket
from kernel.events import register_consumer, unregister_consumer
from kernel.models import OutboxEvent, ProcessedEvent
from kernel.outbox import redeliver_event, relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.concurrency import run_concurrently
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]
# Receipts of bookings' own consumers (partners' webhook consumer has its own tests).
BOOKINGS_RECEIPTS = ProcessedEvent.objects.exclude(consumer__startswith="partners.")


class WorkerKilled(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing on the way up may swallow it."""


def test_a_relay_killed_in_the_middle_of_a_batch_leaves_every_effect_exactly_once(settings, flight):
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    bookings = [
        hold_and_confirm(UserFactory(), flight, seats=[f"{row}A"], names=[f"P{row}"])
        for row in (20, 21, 22)
    ]
    calls = []

    @register_consumer("booking.confirmed", name="test.dies_on_second")
    def dies_on_second(event):
        calls.append(event.pk)
        if len(calls) == 2:
            raise WorkerKilled()

    try:
        with pytest.raises(WorkerKilled):
            relay_outbox()
        # The first event's effects were done in the dead transaction: none survived.
        assert not Ticket.objects.exists()
        assert not ProcessedEvent.objects.exists()
        assert not OutboxEvent.objects.filter(published_at__isnull=False).exists()

        assert relay_outbox().published == 3
    finally:
        unregister_consumer("test.dies_on_second")
    for booking in bookings:
        assert Ticket.objects.filter(booking=booking).count() == 1
        assert Notification.objects.filter(booking=booking).count() == 1
    assert BOOKINGS_RECEIPTS.count() == 3 * 3


def test_the_same_event_delivered_three_times_at_once_has_its_effects_once(settings, flight):
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    hold_and_confirm(UserFactory(), flight, seats=["12A", "12B", "12C"], names=["A", "B", "C"])
    event = OutboxEvent.objects.get(event_type="booking.confirmed")

    outcomes = run_concurrently([lambda: redeliver_event(event_id=event.pk)] * 3)

    assert outcomes.errors == [] and outcomes.results == [[], [], []]
    assert Ticket.objects.count() == 3
    assert Notification.objects.count() == 1
    assert BOOKINGS_RECEIPTS.filter(event=event).count() == 2


def test_a_second_relay_skips_locked_events_and_does_not_overtake_them(settings, flight):
    """Two relays (two beats, or beat and a kick) never deliver one event twice, and a
    booking's later event is not delivered while its earlier one is in another relay's hands."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    first = hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    second = hold_and_confirm(UserFactory(), flight, seats=["14A"], names=["B"])
    e1, e2 = OutboxEvent.objects.order_by("id")
    # A later event of the first booking, so the blocked relay has something to overtake.
    with transaction.atomic():
        e3 = OutboxEvent.objects.create(
            aggregate_type="booking",
            aggregate_id=str(first.pk),
            event_type="test.later",
            payload={"bookingId": first.pk},
            created_at=timezone.now(),
        )
    locked, release = threading.Event(), threading.Event()

    def hold_first_event():
        try:
            with transaction.atomic():
                OutboxEvent.objects.select_for_update().get(pk=e1.pk)
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_first_event)
    holder.start()
    try:
        assert locked.wait(10)
        report = relay_outbox(now=timezone.now() + timedelta(seconds=1))
    finally:
        release.set()
        holder.join(10)
    # e1 locked elsewhere: skipped, not waited for; e3 deferred behind it; e2 delivered.
    assert (report.claimed, report.published, report.deferred) == (2, 1, 1)
    assert set(
        OutboxEvent.objects.filter(published_at__isnull=False).values_list("pk", flat=True)
    ) == {e2.pk}
    assert Ticket.objects.filter(booking=second).count() == 1
    assert not Ticket.objects.filter(booking=first).exists()
    assert relay_outbox().published == 2
    assert OutboxEvent.objects.filter(pk=e3.pk, published_at__isnull=False).exists()
