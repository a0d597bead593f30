"""bookings/0008_move_outbox_to_kernel: the outbox and the idempotency records change app, not
table, so every row (and its id) survives; the hold's idempotency link becomes a generic
resource reference, and back again when migrating backwards."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from bookings.models import Booking, Notification
from kernel.models import IdempotencyRecord, OutboxEvent, ProcessedEvent
from kernel.outbox import relay_outbox
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("bookings", "0007_idempotency_records_and_email_receipts")


def migrate(*target: str) -> None:
    call_command("migrate", *target, verbosity=0)


def old_apps():
    return MigrationExecutor(connection).loader.project_state([BEFORE]).apps


@pytest.fixture
def back_to_latest():
    yield
    migrate()  # whatever happened, leave the schema as the rest of the suite expects it


def test_outbox_and_idempotency_rows_survive_the_move_both_ways(customer, flight, back_to_latest):
    # Live data made by today's code: a hold with an Idempotency-Key, its outbox events, a
    # consumer's receipt and an e-mail linked to its event.
    api = client_for(customer)
    body = {
        "flightId": flight.pk,
        "fareClass": "ECONOMY",
        # Not an exit row: migrating back past bookings 0022 drops the passengers' stored
        # confirmations, and the replay answers the booking as it is now.
        "seats": ["14A"],
    }
    held = api.post("/api/bookings", body, format="json", HTTP_IDEMPOTENCY_KEY="k-move")
    assert held.status_code == 201, held.content
    booking = Booking.objects.get()
    now = timezone.now()
    event = OutboxEvent.objects.create(
        sale_id=booking.sale_id,
        aggregate_type="booking",
        aggregate_id=str(booking.pk),
        event_type="booking.expired",
        payload={"bookingId": booking.pk},
        created_at=now,
    )
    relay_outbox()
    assert Notification.objects.get(event=event).kind == "booking_expired"
    receipts = set(ProcessedEvent.objects.values_list("id", "consumer", "event_id"))
    assert receipts, "the relay wrote consumer receipts"
    events = set(OutboxEvent.objects.values_list("id", "event_type", "published_at"))
    record = IdempotencyRecord.objects.get()
    assert (record.resource_type, record.resource_id) == ("bookings.booking", str(booking.pk))

    # Backwards: the records point at their booking again, through the old foreign key.
    migrate(*BEFORE)
    apps = old_apps()
    OldRecord = apps.get_model("bookings", "IdempotencyRecord")
    OldEvent = apps.get_model("bookings", "OutboxEvent")
    OldReceipt = apps.get_model("bookings", "ProcessedEvent")
    assert OldRecord.objects.get(pk=record.pk).booking_id == booking.pk
    assert set(OldEvent.objects.values_list("id", "event_type", "published_at")) == events
    assert set(OldReceipt.objects.values_list("id", "consumer", "event_id")) == receipts

    # Rows written by the old code (old shape), then forwards again.
    old_event = OldEvent.objects.create(
        aggregate_type="booking",
        aggregate_id=str(booking.pk),
        event_type="booking.cancelled",
        payload={"bookingId": booking.pk},
        created_at=now,
    )
    OldReceipt.objects.create(consumer="test.consumer", event=old_event, processed_at=now)
    old_record = OldRecord.objects.create(
        customer_id=customer.pk,
        scope="page-hold",
        key="k-old",
        request_fingerprint="f" * 64,
        response_status=303,
        response_body={"bookingId": booking.pk},
        booking_id=booking.pk,
        created_at=now,
    )
    unlinked = OldRecord.objects.create(
        customer_id=customer.pk,
        scope="api-hold",
        key="k-none",
        request_fingerprint="e" * 64,
        response_status=201,
        response_body={},
        created_at=now,
    )
    migrate()

    assert set(OutboxEvent.objects.values_list("id", "event_type", "published_at")) == events | {
        (old_event.pk, "booking.cancelled", None)
    }
    assert set(ProcessedEvent.objects.values_list("id", "consumer", "event_id")) >= receipts
    assert ProcessedEvent.objects.filter(consumer="test.consumer", event_id=old_event.pk).exists()
    refs = dict(IdempotencyRecord.objects.values_list("pk", "resource_id"))
    # kernel 0003 gives each record its booking's sale; one that names no booking answers
    # nothing a retry needs and is dropped there (a retry with its key asks again).
    assert refs == {record.pk: str(booking.pk), old_record.pk: str(booking.pk)}
    assert not IdempotencyRecord.objects.filter(pk=unlinked.pk).exists()
    assert IdempotencyRecord.objects.get(pk=old_record.pk).resource_type == "bookings.booking"
    assert set(IdempotencyRecord.objects.values_list("sale_id", flat=True)) == {booking.sale_id}
    assert OutboxEvent.objects.get(pk=old_event.pk).sale_id == booking.sale_id
    # The e-mail outbox still points at its event through the same foreign key.
    assert Notification.objects.get(event=event).kind == "booking_expired"
    # And the moved code works on the moved rows: a retry replays the hold.
    again = api.post("/api/bookings", body, format="json", HTTP_IDEMPOTENCY_KEY="k-move")
    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == held.json()
    # The id sequence is the table's own, so a new event follows the old ones.
    new = OutboxEvent.objects.create(
        sale_id=booking.sale_id,
        aggregate_type="booking",
        aggregate_id="x",
        event_type="noop",
        created_at=now,
    )
    assert new.pk > old_event.pk
