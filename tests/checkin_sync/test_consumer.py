"""The check-in sync reading the real event log: replay, resume, kills, redelivery order."""

from __future__ import annotations

import pytest

from checkin_sync import consumer, services
from checkin_sync.consumer import open_reader, replay_from_start, sync_from_log
from checkin_sync.models import AppliedEvent, CheckinBooking, MirroredStatus
from kernel.eventlog.relay import relay_event_log
from kernel.models import OutboxEvent
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm
from tests.checkin_sync.mirror import bookings_applied_out_of_order, mirror, truth
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


class ConsumerKilled(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing on the way up may swallow it."""


def sell(flight, rows):
    """A confirmed booking per row (two seats each), every third one cancelled again."""
    sold = []
    for n, row in enumerate(rows):
        booking = hold_and_confirm(
            UserFactory(), flight, seats=[f"{row}A", f"{row}B"], names=[f"A{row}", f"B{row}"]
        )
        if n % 3 == 2:
            cancel_confirmed(booking)
        sold.append(booking)
    relay_event_log()
    assert not OutboxEvent.objects.filter(logged_at__isnull=True).exists()
    return sold


@pytest.fixture
def reader(event_log):
    readers = []

    def make(**kwargs):
        readers.append(open_reader(**kwargs))
        return readers[-1]

    yield make
    for r in readers:
        r.close()


def test_a_mirror_rebuilt_from_offset_0_equals_the_bookings_in_postgresql(
    event_log, reader, flight
):
    sell(flight, rows=range(10, 16))
    first = sync_from_log(reader(), idle_seconds=1)
    assert first.applied == len(event_log.messages()) and mirror() == truth()

    # Lost the check-in database, or a new consumer: forget the offset, rebuild from 0.
    CheckinBooking.objects.filter(status=MirroredStatus.CONFIRMED).delete()  # damage
    replay_from_start()
    rebuilt = sync_from_log(reader(), idle_seconds=1)

    assert rebuilt.delivered == rebuilt.applied == first.applied
    assert min(AppliedEvent.objects.values_list("stream_sequence", flat=True)) == 1
    assert mirror() == truth()
    assert len(truth()["bookings"]) == 6


def test_a_consumer_that_was_away_resumes_from_its_stored_offset(event_log, reader, flight):
    sell(flight, rows=range(10, 13))
    before = sync_from_log(reader(), idle_seconds=1)
    last_offset = max(AppliedEvent.objects.values_list("stream_sequence", flat=True))

    sell(flight, rows=range(20, 23))  # while it was away
    again = sync_from_log(reader(), idle_seconds=1)  # a new process, the same durable consumer

    assert again.duplicates == 0 and again.delivered == again.applied
    assert before.applied + again.applied == len(event_log.messages())
    assert (
        min(
            AppliedEvent.objects.filter(stream_sequence__gt=last_offset).values_list(
                "stream_sequence", flat=True
            )
        )
        == last_offset + 1
    )
    assert mirror() == truth()


@pytest.mark.parametrize("moment", ["after its commit, before its ack", "inside its effect"])
def test_a_consumer_killed_before_its_ack_leaves_every_effect_exactly_once(
    event_log, reader, flight, monkeypatch, moment
):
    sell(flight, rows=range(10, 14))
    dying = reader(ack_wait_seconds=2)
    if moment == "inside its effect":
        original = services._tally

        def tally_then_die(*args, **kwargs):
            original(*args, **kwargs)
            raise ConsumerKilled()

        monkeypatch.setattr(services, "_tally", tally_then_die)
    else:
        monkeypatch.setattr(dying, "ack", lambda delivery: (_ for _ in ()).throw(ConsumerKilled()))
    with pytest.raises(ConsumerKilled):
        sync_from_log(dying, idle_seconds=1)
    dying.close()  # the process is gone: its connection and unacknowledged message with it
    monkeypatch.undo()

    after = sync_from_log(reader(ack_wait_seconds=2), idle_seconds=4)

    # Committed before the kill: redelivered, found applied, acknowledged without effect.
    assert after.duplicates >= (1 if moment.startswith("after") else 0)
    assert AppliedEvent.objects.count() == len(event_log.messages())
    assert mirror() == truth()


def test_control_without_the_consumers_dedupe_a_killed_consumer_counts_passengers_twice(
    event_log, reader, flight, monkeypatch
):
    sell(flight, rows=range(10, 14))
    monkeypatch.setattr(services, "claim_event", lambda **kwargs: True)
    dying = reader(ack_wait_seconds=2)
    monkeypatch.setattr(dying, "ack", lambda delivery: (_ for _ in ()).throw(ConsumerKilled()))
    with pytest.raises(ConsumerKilled):
        sync_from_log(dying, idle_seconds=1)
    dying.close()

    sync_from_log(reader(ack_wait_seconds=2), idle_seconds=4)

    expected, got = truth()["tally"], mirror()["tally"]
    sale = str(flight.sale_id)
    # The first event (a two-passenger confirmation) was applied twice (or more, if a slow
    # machine let another acknowledgement run past `ack_wait`).
    assert got[(sale, "passengers")] - expected[(sale, "passengers")] >= 2
    assert got[(sale, "bookings")] - expected[(sale, "bookings")] >= 1


def fail_first_confirmation(monkeypatch):
    original, failed = services._mirror_confirmed, []

    def flaky(event):
        if not failed:
            failed.append(event.event_id)
            raise RuntimeError("check-in database hiccup")
        original(event)

    monkeypatch.setattr(services, "_mirror_confirmed", flaky)
    monkeypatch.setattr(consumer, "RETRY_DELAY_SECONDS", 0.5)
    return failed


def test_a_redelivered_event_is_still_applied_before_its_bookings_later_events(
    event_log, reader, flight, monkeypatch
):
    booking = hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    cancel_confirmed(booking)  # confirmed, cancelled, seats released: one subject's order
    relay_event_log()
    failed = fail_first_confirmation(monkeypatch)

    report = sync_from_log(reader(), idle_seconds=3)

    assert report.retried == 1 and failed  # NAK'd once, redelivered
    assert bookings_applied_out_of_order() == []
    assert CheckinBooking.objects.get().status == MirroredStatus.CANCELLED
    assert mirror() == truth()


def test_control_with_more_than_one_message_in_flight_a_redelivery_is_overtaken(
    event_log, reader, flight, monkeypatch
):
    booking = hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["A"])
    cancel_confirmed(booking)
    relay_event_log()
    fail_first_confirmation(monkeypatch)

    sync_from_log(reader(max_ack_pending=100), idle_seconds=3)

    assert bookings_applied_out_of_order() == [str(booking.pk)]
    # The cancellation overtook the retried confirmation: check-in expects a cancelled passenger.
    assert CheckinBooking.objects.get().status == MirroredStatus.CONFIRMED
    assert mirror() != truth()
