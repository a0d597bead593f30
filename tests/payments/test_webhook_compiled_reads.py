"""The webhook's two reads compiled once per connection (kernel.compiled) send the ORM
querysets' own SQL and answer what they answer: the payment the event names (of this
gateway), and the sandbox's charge behind a success (docs/performance.md, "Issue 26: one
relay kick pending")."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from payments.gateways.sandbox import _CHARGE
from payments.models import Payment, SandboxCharge
from payments.webhooks import _GATEWAYS_PAYMENT
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay
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
