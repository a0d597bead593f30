"""The event-log relay against the real NATS JetStream on this machine (docs/event-log.md)."""

from __future__ import annotations

import json
import socket
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.models import Ticket
from kernel import tasks
from kernel.eventlog import envelope
from kernel.eventlog import relay as relay_module
from kernel.eventlog.publisher import close_publishers
from kernel.eventlog.relay import relay_event_log, release_lease, take_lease
from kernel.models import OutboxEvent
from kernel.outbox import purge_published, relay_outbox
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


class RelayKilled(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing on the way up may swallow it."""


def three_bookings(flight):
    first = hold_and_confirm(UserFactory(), flight, seats=["12A", "12B"], names=["A", "B"])
    second = hold_and_confirm(UserFactory(), flight, seats=["14C"], names=["C"])
    third = hold_and_confirm(UserFactory(), flight, seats=["16D"], names=["D"])
    cancel_confirmed(first)  # booking.cancelled + seats.released, after its booking.confirmed
    return first, second, third


def test_every_outbox_event_is_logged_once_on_its_bookings_subject_in_outbox_order(
    event_log, settings, flight
):
    bookings = three_bookings(flight)
    events = list(OutboxEvent.objects.order_by("id"))
    assert len(events) == 5

    report = relay_event_log()

    assert (report.read, report.logged, report.duplicates, report.error) == (5, 5, 0, "")
    assert not OutboxEvent.objects.filter(logged_at__isnull=True).exists()
    stored = event_log.messages()
    assert [m.msg_id for m in stored] == [str(e.pk) for e in events]
    prefix = settings.EVENT_LOG["SUBJECT_PREFIX"]
    for message, event in zip(stored, events, strict=True):
        assert message.subject == (
            f"{prefix}.booking.{flight.sale_id}.{event.aggregate_id}.{event.event_type}"
        )
        body = json.loads(message.data)
        assert body["eventId"] == event.pk and body["payload"] == event.payload
    first = str(bookings[0].pk)
    of_first = [m for m in stored if m.subject.split(".")[3] == first]
    assert [json.loads(m.data)["eventType"] for m in of_first] == [
        "booking.confirmed",
        "booking.cancelled",
        "seats.released",
    ]
    # What check-in needs travels in the confirmation: who sits where.
    confirmed = next(e for e in events if e.event_type == "booking.confirmed")
    assert [p["seat"] for p in confirmed.payload["passengers"]] == ["12A", "12B"]
    assert relay_event_log().read == 0


def test_a_relay_killed_between_the_logs_ack_and_its_mark_republishes_and_the_log_dedupes(
    event_log, flight, monkeypatch
):
    three_bookings(flight)

    def killed(**kwargs):
        raise RelayKilled()

    with monkeypatch.context() as m:
        m.setattr(relay_module, "mark_logged", killed)
        with pytest.raises(RelayKilled):
            relay_event_log()
    assert len(event_log.messages()) == 5  # in the log ...
    assert OutboxEvent.objects.filter(logged_at__isnull=True).count() == 5  # ... not marked

    close_publishers()  # the dead process's connection goes with it
    report = relay_event_log()

    assert (report.logged, report.duplicates) == (5, 5)
    assert len(event_log.messages()) == 5
    assert not OutboxEvent.objects.filter(logged_at__isnull=True).exists()


def test_control_without_the_message_id_the_republish_after_a_killed_relay_doubles_the_log(
    event_log, flight, monkeypatch
):
    three_bookings(flight)
    monkeypatch.setattr(envelope, "MSG_ID_HEADER", "X-Not-The-Dedupe-Header")

    def killed(**kwargs):
        raise RelayKilled()

    with monkeypatch.context() as m:
        m.setattr(relay_module, "mark_logged", killed)
        with pytest.raises(RelayKilled):
            relay_event_log()
    report = relay_event_log()

    assert (report.logged, report.duplicates) == (5, 0)
    assert len(event_log.messages()) == 10


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_log_that_is_down_holds_back_neither_our_own_relay_nor_loses_an_event(
    event_log, settings, flight
):
    stream = settings.EVENT_LOG["STREAM"]
    settings.EVENT_LOG = {**settings.EVENT_LOG, "URL": f"nats://127.0.0.1:{free_port()}"}
    hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])

    down = relay_event_log()
    ours = relay_outbox()

    assert down.read == 1 and down.logged == 0 and down.error
    assert ours.published == 1 and Ticket.objects.count() == 1
    assert OutboxEvent.objects.get().logged_at is None
    settings.EVENT_LOG = {**settings.EVENT_LOG, "URL": event_log.url, "STREAM": stream}
    assert relay_event_log().logged == 1
    assert len(event_log.messages()) == 1


def test_purge_keeps_an_old_event_the_log_has_not_acknowledged(event_log, settings, flight):
    hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    hold_and_confirm(UserFactory(), flight, seats=["14A"], names=["B"])
    old = timezone.now() - timedelta(days=30)
    OutboxEvent.objects.update(published_at=old)
    logged, unlogged = OutboxEvent.objects.order_by("id")
    OutboxEvent.objects.filter(pk=logged.pk).update(logged_at=old)

    assert purge_published(keep_days=14) == 1
    assert list(OutboxEvent.objects.values_list("pk", flat=True)) == [unlogged.pk]

    # Control: with the log off the outbox purges as it always did.
    settings.EVENT_LOG = {**settings.EVENT_LOG, "URL": ""}
    assert purge_published(keep_days=14) == 1


def test_one_relay_holds_the_lease_until_it_releases_it_or_it_runs_out(event_log):
    assert take_lease(name="event-log", holder="a", seconds=0.5)
    assert not take_lease(name="event-log", holder="b", seconds=0.5)
    assert take_lease(name="event-log", holder="a", seconds=0.5)  # renewed by its holder
    release_lease(name="event-log", holder="a")
    assert take_lease(name="event-log", holder="b", seconds=0.5)
    assert not take_lease(name="event-log", holder="a", seconds=0.5)
    time.sleep(0.6)  # b died holding it
    assert take_lease(name="event-log", holder="a", seconds=0.5)


def test_a_relay_without_the_lease_publishes_nothing(event_log, flight):
    hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    assert take_lease(name="event-log", holder="another relay", seconds=30)

    report = relay_event_log()

    assert not report.leased and report.read == 0
    assert not event_log.exists() or event_log.messages() == []


def test_the_task_is_a_no_op_without_an_event_log_url(settings, flight):
    settings.EVENT_LOG = {**settings.EVENT_LOG, "URL": ""}
    hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    assert tasks.relay_event_log() == 0
    assert OutboxEvent.objects.get().logged_at is None


def test_the_task_relays_everything_when_the_log_is_on(event_log, settings, flight):
    settings.EVENT_LOG = {**settings.EVENT_LOG, "BATCH_SIZE": 2}
    three_bookings(flight)
    assert tasks.relay_event_log() == 5
    assert len(event_log.messages()) == 5
