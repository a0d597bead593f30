"""The webhook's two reads compiled once per connection (kernel.compiled) send the ORM
querysets' own SQL and answer what they answer: the payment the event names (of this
gateway), and the sandbox's charge behind a success (docs/performance.md, "Issue 26: one
relay kick pending"); its event row is written without a savepoint and its outcome with the
ORM's own UPDATE (docs/performance.md, "Issue 26: the pay request's writes")."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from payments.gateways.sandbox import _CHARGE
from payments.models import Payment, SandboxCharge, WebhookEvent
from payments.webhooks import (
    _GATEWAYS_PAYMENT,
    _WEBHOOK_EVENT_INSERT,
    WebhookOutcome,
    record_and_apply,
)
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)
from tests.payments.test_pay_compiled_reads import same_row

pytestmark = pytest.mark.django_db(transaction=True)


def statements(read) -> tuple[object, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        answer = read()
    return answer, [q["sql"] for q in queries.captured_queries]


@pytest.fixture
def paid(customer, flight) -> Payment:
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="key-1", paymentMethod=GOOD_CARD)
    assert response.status_code == 201, response.content
    return Payment.objects.get(booking=booking)


def test_the_payment_a_webhook_names_reads_as_the_orm_reads_it(paid):
    cases = [("sandbox", paid.pk), ("stripe", paid.pk), ("sandbox", paid.pk + 1000)]
    cases.append(("sandbox", 2**70))  # beyond bigint: no row either way, not an error
    for gateway, payment_id in cases:
        orm, orm_sql = statements(
            lambda g=gateway, p=payment_id: Payment.objects.filter(gateway=g).filter(pk=p).first()
        )
        ours, our_sql = statements(
            lambda g=gateway, p=payment_id: _GATEWAYS_PAYMENT.first(gateway=g, payment_id=p)
        )
        same_row(ours, orm)
        if payment_id < 2**63:  # the ORM sends nothing for an id no bigint can hold
            assert our_sql == orm_sql
    assert _GATEWAYS_PAYMENT.first(gateway="sandbox", payment_id=paid.pk).pk == paid.pk


def test_the_charge_behind_a_success_reads_as_the_orm_reads_it(paid):
    charge_id = SandboxCharge.objects.get().pk
    for reference in (charge_id, "ch_unknown", ""):
        orm, orm_sql = statements(lambda r=reference: SandboxCharge.objects.filter(pk=r).first())
        ours, our_sql = statements(lambda r=reference: _CHARGE.first(charge_id=r))
        same_row(ours, orm)
        assert our_sql == orm_sql
    assert _CHARGE.first(charge_id=charge_id).merchant_reference == str(paid.pk)


def test_the_webhook_records_its_event_without_a_savepoint_and_its_outcome_as_the_orm(
    paid, monkeypatch
):
    # The event row: the ORM's INSERT with OnConflict.IGNORE (tests/kernel/
    # test_compiled_inserts.py); the outcome: the ORM's own UPDATE, byte for byte.
    now = timezone.now()
    monkeypatch.setattr("payments.webhooks.timezone.now", lambda: now)
    body, headers = signed(sandbox_event(paid))
    response, sent = statements(lambda: post_webhook(APIClient(), body, headers))
    assert response.status_code == 200, response.content
    assert not [sql for sql in sent if "SAVEPOINT" in sql], "\n".join(sent)
    [insert] = [sql for sql in sent if sql.startswith("INSERT")]
    assert "ON CONFLICT DO NOTHING" in insert
    record = WebhookEvent.objects.get()
    assert record.outcome == f"payment {paid.pk} is SUCCEEDED" and record.processed_at == now
    with transaction.atomic():
        _, orm = statements(
            lambda: WebhookEvent.objects.filter(pk=record.pk).update(
                outcome=record.outcome, processed_at=now
            )
        )
        transaction.set_rollback(True)
    assert [sql for sql in sent if sql.startswith("UPDATE")] == orm
    # The same event again: acknowledged, ignored, nothing written.
    again, sent = statements(lambda: post_webhook(APIClient(), body, headers))
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert not [sql for sql in sent if sql.startswith("UPDATE") or "SAVEPOINT" in sql]
    assert list(WebhookEvent.objects.values_list("pk", "outcome", "processed_at")) == [
        (record.pk, record.outcome, now)
    ]


def test_an_event_row_refused_by_another_constraint_is_answered_as_a_duplicate(paid, monkeypatch):
    # As when a savepoint caught every IntegrityError of the insert: acknowledged, nothing
    # applied, nothing written (the transaction is rolled back, not committed half-done).
    def refused(**values):
        with transaction.mark_for_rollback_on_error():
            raise IntegrityError("null value in column violates not-null constraint")

    monkeypatch.setattr(_WEBHOOK_EVENT_INSERT, "create", refused)
    outcome = record_and_apply(gateway_name="sandbox", event=_event(paid))
    assert outcome == WebhookOutcome("evt_1", duplicate=True, outcome="duplicate, ignored")
    assert not WebhookEvent.objects.exists()
    assert not connection.in_atomic_block


def _event(paid):
    from payments.gateways import get_gateway

    body, headers = signed(sandbox_event(paid))
    return get_gateway("sandbox").parse_webhook(body=body, headers=headers)
