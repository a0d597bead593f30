"""kernel 0003 and bookings 0021 forward and back with live rows: outbox events, their
receipts, hold idempotency records and e-mails get their sale (each its own booking's, across
two sales; an event of no booking the sale its payload names), a record that names no booking
is dropped, and going back drops only the copied columns."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bookings.models import Notification
from kernel.models import IdempotencyRecord, OutboxEvent, ProcessedEvent
from kernel.outbox import relay_outbox
from tests.api.conftest import client_for
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, named_hold

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("kernel", "0002_event_log"), ("bookings", "0020_resale")]
TABLES = (OutboxEvent, ProcessedEvent, IdempotencyRecord, Notification)


def expired_event(Event, booking, **sale) -> None:
    Event.objects.create(
        aggregate_type="booking", aggregate_id=str(booking.pk), event_type="booking.expired",
        payload={"bookingId": booking.pk}, created_at=timezone.now(), **sale,
    )  # fmt: skip


def test_kernel_rows_and_e_mails_get_their_sale_forward_and_back(customer):
    new_flight, old_flight = FlightFactory(), FlightFactory()
    held = client_for(customer).post(
        "/api/bookings",
        {
            "flightId": new_flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12A"],
            "exitRowConfirmed": True,
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-new",
    )
    assert held.status_code == 201, held.content
    new = named_hold(customer=customer, flight=new_flight, seats=("14A",))
    expired_event(OutboxEvent, new, sale_id=new.sale_id)
    old = named_hold(customer=customer, flight=old_flight, seats=("12A",))
    try:
        apps = migrate(BEFORE)
        Event = apps.get_model("kernel", "OutboxEvent")
        assert "sale_id" not in {f.name for f in Event._meta.get_fields()}
        assert "sale" not in {
            f.name for f in apps.get_model("bookings", "Notification")._meta.get_fields()
        }
        # Rows written by the old code, on the other sale: an event of its booking, one of
        # no booking (a flight's, by its payload), a linked and an unlinked hold record.
        expired_event(Event, old)
        Event.objects.create(
            aggregate_type="flight", aggregate_id=str(old_flight.pk), event_type="test.noop",
            payload={"flightId": old_flight.pk}, created_at=timezone.now(),
            published_at=timezone.now(),
        )  # fmt: skip
        Record = apps.get_model("kernel", "IdempotencyRecord")
        for key, resource in (("k-old", str(old.pk)), ("k-none", "")):
            Record.objects.create(
                customer_id=customer.pk, scope="api-hold", key=key, request_fingerprint="f",
                response_status=201, response_body={}, created_at=timezone.now(),
                resource_type="bookings.booking" if resource else "", resource_id=resource,
            )  # fmt: skip
        migrate(latest())
        relay_outbox()  # old and new events alike: receipts and e-mails with their sale

        events = dict(OutboxEvent.objects.values_list("aggregate_id", "sale_id"))
        assert events == {
            str(new.pk): new_flight.sale_id,
            str(old.pk): old_flight.sale_id,
            str(old_flight.pk): old_flight.sale_id,
        }
        for model in (ProcessedEvent, Notification):
            rows = model.objects.values_list("event__aggregate_id", "sale_id")
            assert set(rows) == {
                (str(new.pk), new_flight.sale_id),
                (str(old.pk), old_flight.sale_id),
            }, model
        assert set(IdempotencyRecord.objects.values_list("key", "sale_id")) == {
            ("k-new", new_flight.sale_id),
            ("k-old", old_flight.sale_id),
        }  # k-none named no booking: dropped
        counts = [model.objects.count() for model in TABLES]

        back = migrate(BEFORE)  # every row stays; only the copies go
        assert [
            back.get_model(model._meta.app_label, model.__name__).objects.count()
            for model in TABLES
        ] == counts
    finally:
        migrate(latest())
    # Today's code writes the columns itself: a retry of the first hold still replays.
    again = client_for(customer).post(
        "/api/bookings",
        {
            "flightId": new_flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12A"],
            "exitRowConfirmed": True,
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-new",
    )
    assert again["Idempotent-Replayed"] == "true"
