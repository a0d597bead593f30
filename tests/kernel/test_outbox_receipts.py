"""A consumer's receipt is one INSERT ... ON CONFLICT DO NOTHING (kernel.outbox, issue 26):
no savepoint of its own around it (two round trips fewer per consumer and event), a receipt
already there is a skip that leaves the transaction usable, and the receipt and the effect
still commit or roll back together."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from kernel import outbox
from kernel.events import register_consumer, unregister_consumer
from kernel.models import ProcessedEvent
from kernel.outbox import emit_event, redeliver_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def effects(settings):
    """An event of the test's own type with one consumer; the consumer's effects."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    done: list[int] = []

    @register_consumer("test.receipt", name="test.receipt_effect")
    def effect(event):
        if event.payload.get("fail"):
            raise RuntimeError("the effect failed")
        done.append(event.pk)

    yield done
    unregister_consumer("test.receipt_effect")


def new_event(**payload):
    with transaction.atomic():
        return emit_event(
            sale_id=1,
            aggregate_type="test",
            aggregate_id=1,
            event_type="test.receipt",
            payload=payload,
        )


def receipts(event) -> int:
    return ProcessedEvent.objects.filter(event=event, consumer="test.receipt_effect").count()


def savepoints_of_a_delivery(event) -> tuple[int, str]:
    """(the SAVEPOINTs of one delivery of `event`, its receipt's statement)."""
    with CaptureQueriesContext(connection) as queries:
        assert redeliver_event(event_id=event.pk) == []
    statements = [q["sql"] for q in queries.captured_queries]
    (receipt,) = [sql for sql in statements if "bookings_processedevent" in sql]
    return len([sql for sql in statements if sql.startswith("SAVEPOINT")]), receipt


def test_a_delivery_writes_its_receipt_without_a_savepoint_of_its_own(effects):
    event = new_event()
    savepoints, receipt = savepoints_of_a_delivery(event)
    assert "ON CONFLICT DO NOTHING" in receipt
    # redeliver_event's atomic (a savepoint inside the test's transaction) and the consumer's
    # own (its effect rolls back alone): nothing more.
    assert savepoints == 2
    assert effects == [event.pk] and receipts(event) == 1


def test_control_a_receipt_in_a_savepoint_of_its_own_is_counted(effects, monkeypatch):
    def savepointed(consumer, event) -> bool:  # the receipt as it was written before
        try:
            with transaction.atomic():
                ProcessedEvent.objects.create(
                    sale_id=event.sale_id,
                    consumer=consumer.name,
                    event=event,
                    processed_at=timezone.now(),
                )
        except IntegrityError:
            return False
        return True

    monkeypatch.setattr(outbox, "_take_receipt", savepointed)
    assert savepoints_of_a_delivery(new_event())[0] == 3


def test_a_second_delivery_finds_the_receipt_and_the_transaction_goes_on(effects):
    event = new_event()
    redeliver_event(event_id=event.pk)
    with transaction.atomic():
        assert outbox._consume(_the_consumer(), event) is False
        assert ProcessedEvent.objects.filter(event=event).count() == 1  # still usable
    assert effects == [event.pk]


def test_a_failed_effect_leaves_no_receipt_and_is_done_on_the_next_delivery(effects):
    event = new_event(fail=True)
    assert redeliver_event(event_id=event.pk) != []
    assert receipts(event) == 0 and effects == []
    event.payload = {}
    event.save(update_fields=["payload"])
    assert redeliver_event(event_id=event.pk) == []
    assert receipts(event) == 1 and effects == [event.pk]


def _the_consumer():
    from kernel.events import consumers_for

    (consumer,) = [c for c in consumers_for("test.receipt") if c.name == "test.receipt_effect"]
    return consumer
