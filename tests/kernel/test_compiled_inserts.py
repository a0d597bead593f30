"""INSERTs compiled once (kernel.compiled_inserts) send the ORM's own statement and write the
ORM's row: the payment, the outbox event, the sandbox's charge and event, the webhook event
(docs/performance.md, "Issue 26: the pay request's writes").  Each pair below writes the same
values once through the ORM (rolled back) and once compiled, and compares the statements as
the database receives them, the rows written and the instances returned; signals are sent as
`save()` sends them (none for `bulk_create`)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models.constants import OnConflict
from django.db.models.signals import post_save, pre_save
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from kernel.compiled_inserts import CompiledInsert
from kernel.models import OutboxEvent
from payments.models import Payment, SandboxCharge, SandboxEvent, WebhookEvent
from tests.payments.helpers import hold

pytestmark = pytest.mark.django_db(transaction=True)

WHEN = datetime(2026, 12, 6, 9, 30, 1, 123456, tzinfo=UTC)


def inserts(run) -> tuple[list[str], object]:
    with CaptureQueriesContext(connection) as queries:
        answer = run()
    return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")], answer


def orm_then_compiled(orm, compiled):
    """The ORM's statement and instance (its row rolled back), then the compiled ones."""
    with transaction.atomic():
        orm_sql, orm_obj = inserts(orm)
        orm_row = type(orm_obj).objects.filter(pk=orm_obj.pk).values().get()
        transaction.set_rollback(True)
    compiled_sql, compiled_obj = inserts(compiled)
    compiled_row = type(compiled_obj).objects.filter(pk=compiled_obj.pk).values().get()
    return (orm_sql, orm_obj, orm_row), (compiled_sql, compiled_obj, compiled_row)


def same_instance(compiled, orm, *, but=("id",)) -> None:
    assert type(compiled) is type(orm)
    assert compiled._state.adding is orm._state.adding is False
    assert compiled._state.db == orm._state.db
    keep = [f.attname for f in orm._meta.concrete_fields if f.attname not in but]
    assert [getattr(compiled, f) for f in keep] == [getattr(orm, f) for f in keep]
    assert [type(getattr(compiled, f)) for f in keep] == [type(getattr(orm, f)) for f in keep]


def without(row: dict, *names: str) -> dict:
    return {k: v for k, v in row.items() if k not in names}


def payment_values(booking) -> dict:
    return {
        "booking": booking,
        "sale_id": booking.sale_id,
        "customer_id": booking.customer_id,
        "idempotency_key": "key-1",
        "request_fingerprint": "f" * 64,
        "amount": booking.amount,
        "currency": booking.currency,
        "gateway": "sandbox",
        "payment_method_token": "",
        "created_at": WHEN,
        "updated_at": WHEN,
    }


def test_a_payment_is_inserted_as_create_inserts_it(customer, flight):
    values = payment_values(hold(customer, flight))
    (orm_sql, orm, orm_row), (sql, compiled, row) = orm_then_compiled(
        lambda: Payment.objects.create(**values), lambda: CompiledInsert(Payment).create(**values)
    )
    assert sql == orm_sql and len(sql) == 1
    assert "RETURNING" in sql[0]
    # The model's defaults (status, refunded amount, blank strings, no answer) as save() wrote.
    assert without(row, "id") == without(orm_row, "id")
    assert row["status"] == "PROCESSING" and row["refunded_amount"] == Decimal("0.00")
    same_instance(compiled, orm)
    assert isinstance(compiled.pk, int) and compiled.pk == row["id"]
    assert compiled.booking is values["booking"]  # the related instance, as create keeps it


def test_an_outbox_event_is_inserted_as_create_inserts_it(customer, flight):
    booking = hold(customer, flight)
    values = {
        "sale_id": booking.sale_id,
        "aggregate_type": "booking",
        "aggregate_id": str(booking.pk),
        "event_type": "booking.confirmed",
        "payload": {"bookingId": booking.pk, "seats": ["12A"], "amount": "1.00"},
        "created_at": WHEN,
    }
    (orm_sql, orm, orm_row), (sql, compiled, row) = orm_then_compiled(
        lambda: OutboxEvent.objects.create(**values),
        lambda: CompiledInsert(OutboxEvent).create(**values),
    )
    assert sql == orm_sql and len(sql) == 1
    assert without(row, "id") == without(orm_row, "id")
    same_instance(compiled, orm)


def charge_values(key: str = "seatkeeper-payment-1") -> dict:
    return {
        "id": "ch_compiled",
        "idempotency_key": key,
        "merchant_reference": "1",
        "amount": Decimal("104.00"),
        "currency": "EUR",
        "status": "succeeded",
        "decline_code": "",
        "card_last4": "4242",
        "created_at": WHEN,
    }


def test_a_sandbox_charge_and_its_event_are_inserted_as_the_orm_inserts_them():
    values = charge_values()
    (orm_sql, orm, orm_row), (sql, compiled, row) = orm_then_compiled(
        lambda: SandboxCharge.objects.create(**values),
        lambda: CompiledInsert(SandboxCharge).create(**values),
    )
    assert sql == orm_sql and len(sql) == 1
    assert "RETURNING" not in sql[0]  # a primary key of its own: nothing to read back
    assert row == orm_row
    same_instance(compiled, orm, but=())

    def event():
        return SandboxEvent(
            id="evt_compiled",
            charge=compiled,
            event_type="payment.succeeded",
            payload={"id": "evt_compiled", "data": {"amount": "104.00"}},
            created_at=WHEN,
        )

    def orm_bulk():
        [made] = SandboxEvent.objects.bulk_create([event()])
        return made

    def compiled_bulk():
        made = event()
        assert CompiledInsert(SandboxEvent).bulk_create_one(made) is True
        return made

    (orm_sql, orm, orm_row), (sql, compiled_event, row) = orm_then_compiled(orm_bulk, compiled_bulk)
    assert sql == orm_sql and len(sql) == 1
    assert row == orm_row
    same_instance(compiled_event, orm, but=())


def webhook_values(event_id: str = "evt_1") -> dict:
    return {
        "gateway": "sandbox",
        "event_id": event_id,
        "event_type": "payment.succeeded",
        "payload": {"id": event_id, "data": {"paymentId": "7"}},
        "received_at": WHEN,
    }


def test_a_webhook_event_is_inserted_as_the_orms_insert_on_conflict_does_nothing():
    values = webhook_values()

    def orm():
        # What the ORM sends for this row with OnConflict.IGNORE and the primary key read back.
        made = WebhookEvent(**values)
        [(pk,)] = WebhookEvent._base_manager._insert(
            [made],
            fields=[f for f in WebhookEvent._meta.local_concrete_fields if not f.primary_key],
            returning_fields=WebhookEvent._meta.db_returning_fields,
            using="default",
            on_conflict=OnConflict.IGNORE,
        )
        made.pk = pk
        made._state.adding, made._state.db = False, "default"
        return made

    once = CompiledInsert(WebhookEvent, ignore_conflicts=True)
    (orm_sql, orm, orm_row), (sql, compiled, row) = orm_then_compiled(
        orm, lambda: once.create(**values)
    )
    assert sql == orm_sql and len(sql) == 1
    assert "ON CONFLICT DO NOTHING" in sql[0] and "RETURNING" in sql[0]
    assert without(row, "id") == without(orm_row, "id")
    same_instance(compiled, orm)
    # The same event again: nothing written, no error, and the transaction still usable.
    with transaction.atomic():
        assert once.create(**values) is None
        assert WebhookEvent.objects.count() == 1
    # Without ignore_conflicts the unique constraint refuses it, as create() would.
    with pytest.raises(IntegrityError), transaction.atomic():
        CompiledInsert(WebhookEvent).create(**values)


def test_a_refused_insert_marks_its_transaction_for_rollback_as_save_does():
    CompiledInsert(SandboxCharge).create(**charge_values())
    for create in (SandboxCharge.objects.create, CompiledInsert(SandboxCharge).create):
        with transaction.atomic():
            try:
                create(**{**charge_values(), "id": "ch_other"})  # the same idempotency key
            except IntegrityError:
                assert connection.needs_rollback
            else:
                pytest.fail("the unique idempotency key let a second charge in")


def test_save_signals_are_sent_as_save_sends_them_and_none_as_bulk_create(customer, flight):
    values = payment_values(hold(customer, flight))
    heard: list[tuple] = []

    def pre(sender, instance, **kwargs):
        heard.append(("pre", sender, instance.pk, instance._state.adding, sorted(kwargs.items())))

    def post(sender, instance, **kwargs):
        heard.append(("post", sender, instance.pk, instance._state.adding, sorted(kwargs.items())))

    pre_save.connect(pre, sender=Payment, dispatch_uid="test-compiled-pre")
    post_save.connect(post, sender=Payment, dispatch_uid="test-compiled-post")
    pre_save.connect(pre, sender=SandboxEvent, dispatch_uid="test-compiled-pre-event")
    try:
        with transaction.atomic():
            Payment.objects.create(**values)
            transaction.set_rollback(True)
        by_orm, heard[:] = list(heard), []
        made = CompiledInsert(Payment).create(**values)
        assert [h[:2] + h[3:] for h in heard] == [h[:2] + h[3:] for h in by_orm]
        assert [h[2] for h in heard] == [None, made.pk]
        heard.clear()
        charge = CompiledInsert(SandboxCharge).create(**charge_values())
        event = SandboxEvent(id="evt_s", charge=charge, event_type="x", payload={}, created_at=WHEN)
        CompiledInsert(SandboxEvent).bulk_create_one(event)
        assert heard == []  # bulk_create sends none
    finally:
        pre_save.disconnect(sender=Payment, dispatch_uid="test-compiled-pre")
        post_save.disconnect(sender=Payment, dispatch_uid="test-compiled-post")
        pre_save.disconnect(sender=SandboxEvent, dispatch_uid="test-compiled-pre-event")


def test_the_written_rows_read_back_as_model_to_dict_of_the_orms(customer, flight):
    # The pay request's own INSERT, through the service that sends it.
    values = payment_values(hold(customer, flight))
    made = CompiledInsert(Payment).create(**values)
    again = Payment.objects.get(pk=made.pk)
    assert model_to_dict(made) == model_to_dict(again)


def test_a_charge_and_its_event_together_are_the_orms_two_inserts_in_one_statement():
    def event(charge, event_id="evt_together"):
        return SandboxEvent(
            id=event_id, charge=charge, event_type="payment.succeeded", payload={}, created_at=WHEN
        )

    def orm():
        charge = SandboxCharge.objects.create(**charge_values())
        SandboxEvent.objects.bulk_create([event(charge)])
        return charge

    with transaction.atomic():
        orm_sql, _ = inserts(orm)
        orm_rows = (
            list(SandboxCharge.objects.values()),
            list(SandboxEvent.objects.values()),
        )
        transaction.set_rollback(True)
    charge = SandboxCharge(**charge_values())
    made = event(charge)
    with CaptureQueriesContext(connection) as queries:
        CompiledInsert(SandboxCharge).together(charge, CompiledInsert(SandboxEvent), made)
    sent = [q["sql"] for q in queries.captured_queries]
    # One statement, no BEGIN/COMMIT (autocommit): the ORM's two INSERTs, the first in WITH.
    assert sent == [f'WITH "first" AS ({orm_sql[0]}) {orm_sql[1]}']
    assert (list(SandboxCharge.objects.values()), list(SandboxEvent.objects.values())) == orm_rows
    assert charge._state.adding is made._state.adding is False
    # Refused whole: a second charge with the same idempotency key writes no event either.
    again = SandboxCharge(**{**charge_values(), "id": "ch_again"})
    with pytest.raises(IntegrityError):
        CompiledInsert(SandboxCharge).together(
            again, CompiledInsert(SandboxEvent), event(again, "evt_again")
        )
    assert list(SandboxEvent.objects.values_list("id", flat=True)) == ["evt_together"]
