"""The relay against real concurrency: separate connections, real row locks."""

import contextlib
import threading
import time
from datetime import timedelta

import pytest
from django.db import IntegrityError, connections, transaction
from django.utils import timezone

from bookings.models import Notification, Ticket
from kernel import outbox
from kernel.events import register_consumer, unregister_consumer
from kernel.models import OutboxEvent, ProcessedEvent
from kernel.outbox import emit_event, redeliver_event, relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.concurrency import run_concurrently
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]
# Receipts of bookings' own consumers (partners' webhook consumer has its own tests).
# The engine's own consumers' receipts (partners' deliveries and the waiting room's sell-out
# check are other apps' consumers of the same events, tested with their apps).
BOOKINGS_RECEIPTS = ProcessedEvent.objects.exclude(consumer__startswith="partners.").exclude(
    consumer__startswith="waitroom."
)


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
            sale_id=first.sale_id,
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


# --- the receipt-first guard and its control (pretix style) ------------------------------------


def _deliver_three_at_once(settings, monkeypatch, consume=None) -> list[int]:
    """Three concurrent deliveries of one event to a slow consumer; what the consumer did."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    # A type of the test's own: no other consumer (and its row locks) orders the deliveries.
    with transaction.atomic():
        event = emit_event(
            sale_id=1, aggregate_type="test", aggregate_id=1, event_type="test.race", payload={}
        )
    effects: list[int] = []

    @register_consumer("test.race", name="test.slow_effect")
    def slow_effect(event):
        time.sleep(0.2)  # a window wide enough for the other deliveries to arrive
        effects.append(event.pk)

    if consume is not None:
        monkeypatch.setattr(outbox, "_consume", consume)
    try:
        outcomes = run_concurrently([lambda: redeliver_event(event_id=event.pk)] * 3)
    finally:
        unregister_consumer("test.slow_effect")
    assert outcomes.errors == []
    return effects


def test_the_receipt_first_guard_lets_one_of_three_concurrent_deliveries_act(settings, monkeypatch):
    assert len(_deliver_three_at_once(settings, monkeypatch)) == 1


def test_control_check_then_act_without_the_receipt_first_acts_more_than_once(
    settings, monkeypatch
):
    def check_then_act(consumer, event):
        # The guard switched off: look for a receipt, act, then write it (no wait on the
        # unique index before the work, so concurrent deliveries all find none).
        if ProcessedEvent.objects.filter(consumer=consumer.name, event=event).exists():
            return False
        with transaction.atomic():
            consumer.handle(event)
        with contextlib.suppress(IntegrityError), transaction.atomic():
            ProcessedEvent.objects.create(
                sale_id=event.sale_id,
                consumer=consumer.name,
                event=event,
                processed_at=timezone.now(),
            )
        return True

    assert len(_deliver_three_at_once(settings, monkeypatch, check_then_act)) > 1
