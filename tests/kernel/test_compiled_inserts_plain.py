"""A column whose value the ORM's steps would send unchanged is read straight off the instance
(kernel.compiled_inserts `_plain_type`): the parameters handed to the driver are the ORM's,
value for value and type for type, whatever the value; a field that changes a step, or a
value those steps would change, takes the ORM's steps."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.models import CharField, DateTimeField, TextField
from django.utils.translation import gettext_lazy

from kernel.compiled_inserts import CompiledInsert, _plain_type
from kernel.models import OutboxEvent
from payments.models import Payment, SandboxCharge, SandboxEvent
from tests.payments.helpers import hold

pytestmark = pytest.mark.django_db

WHEN = datetime(2026, 12, 6, 9, 30, 1, 123456, tzinfo=UTC)


class Label(str):
    """A str subclass: not the exact type, so it takes the ORM's steps."""


def orm_params(insert: CompiledInsert, obj) -> list:
    """What `SQLInsertCompiler` hands the driver for `obj`: each field's `pre_save` then
    `get_db_prep_save`, for the INSERT's columns."""
    template = insert._template(connection, obj._is_pk_set(obj._meta))
    return [
        f.get_db_prep_save(f.pre_save(obj, True), connection=connection) for f in template.fields
    ]


def compiled_params(insert: CompiledInsert, obj) -> list:
    template, params = insert._prepare(obj, connection, signals=False, operation="save")
    return params[: len(template.fields)]


def comparable(params: list) -> list:
    """psycopg's Jsonb wrapper has no equality: its type and what it wraps."""
    return [(type(p), p.obj) if type(p).__name__ == "Jsonb" else p for p in params]


def same_params(insert: CompiledInsert, obj) -> list:
    with warnings.catch_warnings(record=True) as orm_warned:
        warnings.simplefilter("always")
        expected = orm_params(insert, obj)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        params = compiled_params(insert, obj)
    assert comparable(params) == comparable(expected)
    assert [type(p) for p in params] == [type(p) for p in expected]
    assert [str(w.message) for w in warned] == [str(w.message) for w in orm_warned]
    return params


@pytest.mark.parametrize(
    "when",
    [WHEN, datetime(2026, 12, 6, 9, 30), None],  # aware, naive (made aware, warned), none
    ids=["aware", "naive", "none"],
)
@pytest.mark.parametrize(
    "text",
    ["plain", Label("subclass"), gettext_lazy("lazy"), ""],
    ids=["str", "str-subclass", "lazy", "blank"],
)
def test_every_value_reaches_the_driver_as_the_orms_steps_send_it(when, text):
    event = OutboxEvent(
        id=7,
        sale_id=3,
        aggregate_type=text,
        aggregate_id="1",
        event_type="booking.confirmed",
        payload={"a": 1},
        created_at=WHEN,
        next_attempt_at=when,
        last_error=text,
    )
    params = same_params(CompiledInsert(OutboxEvent), event)
    if when is not None and when.tzinfo is None:
        assert datetime.fromisoformat(str(params[9])).tzinfo is not None  # made aware


def test_a_payments_foreign_keys_and_primary_key_are_the_orms(customer, flight):
    booking = hold(customer, flight)
    payment = Payment(
        id=41,
        booking=booking,
        sale_id=booking.sale_id,
        customer_id=customer.pk,
        idempotency_key="key",
        request_fingerprint="f" * 64,
        amount=booking.amount,
        currency=booking.currency,
        gateway="sandbox",
        created_at=WHEN,
        updated_at=WHEN,
    )
    same_params(CompiledInsert(Payment), payment)
    payment.customer_id = True  # a bool is not the exact int type: the ORM's int() applies
    assert same_params(CompiledInsert(Payment), payment)[2] == 1


def test_a_charge_and_its_event_are_the_orms():
    charge = SandboxCharge(
        id="ch_1", idempotency_key="k", amount=1, currency="EUR", created_at=WHEN
    )
    same_params(CompiledInsert(SandboxCharge), charge)
    event = SandboxEvent(id="evt_1", charge=charge, event_type="x", payload={}, created_at=WHEN)
    same_params(CompiledInsert(SandboxEvent), event)


class Upper(CharField):
    def get_prep_value(self, value):
        return super().get_prep_value(value).upper()


class Trimmed:
    def get_prep_value(self, value):
        return super().get_prep_value(value).strip()


class TrimmedText(TextField, Trimmed):
    """A mixin after the base: its step runs from TextField's `super()`."""


def test_a_field_that_changes_a_step_takes_the_orms_steps():
    assert _plain_type(CharField(max_length=3), connection) is str
    assert _plain_type(TextField(), connection) is str
    assert _plain_type(DateTimeField(), connection) is datetime  # PostgreSQL adapts none
    assert _plain_type(Payment._meta.get_field("booking"), connection) is int
    assert _plain_type(Payment._meta.pk, connection) is int
    assert _plain_type(Upper(max_length=3), connection) is None
    assert _plain_type(TrimmedText(), connection) is None
    assert _plain_type(DateTimeField(auto_now=True), connection) is None
    assert _plain_type(DateTimeField(auto_now_add=True), connection) is None
    # A ForeignKey to a CharField key may send "" as NULL: the ORM's steps decide.
    assert _plain_type(SandboxEvent._meta.get_field("charge"), connection) is None
    assert _plain_type(Payment._meta.get_field("amount"), connection) is None
    assert _plain_type(Payment._meta.get_field("response_body"), connection) is None
