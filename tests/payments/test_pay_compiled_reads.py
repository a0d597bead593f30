"""The pay request's reads compiled once per connection (kernel.compiled) answer what the
ORM's querysets they replace answer: the resale of an offer (read, and read FOR UPDATE in the
confirmation), and the payment with its booking's status; the payment's SUCCEEDED update,
sent as plain SQL, is the ORM's own statement (docs/performance.md, "Issue 26: the pay
request", "Next cuts")."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bookings.models import Booking, Resale
from bookings.resale import _LOCKED_OFFER_RESALE, _OFFER_RESALE_STATUS, withdraw_resale
from payments.charging import _STORED_RESPONSE, store_response
from payments.models import Payment
from payments.outcomes import SETTLED_PAYMENT_STATUSES, _mark_succeeded, confirm_payment
from payments.resale import list_booking_for_resale
from payments.selectors import payment_response, payment_with_booking_status
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)

pytestmark = pytest.mark.django_db(transaction=True)


def same_row(compiled, orm) -> None:
    assert (compiled is None) == (orm is None)
    if orm is None:
        return
    assert type(compiled) is type(orm)
    assert compiled.get_deferred_fields() == orm.get_deferred_fields()
    loaded = [f.attname for f in orm._meta.concrete_fields if f.attname in orm.__dict__]
    assert [compiled.__dict__[f] for f in loaded] == [orm.__dict__[f] for f in loaded]


def orm_reads(offer_id: int):
    status = Resale.objects.filter(offer_id=offer_id).only("status").first()
    with transaction.atomic():
        locked = Resale.objects.select_for_update(of=("self",)).filter(offer_id=offer_id).first()
    return status, locked


def compiled_reads(offer_id: int):
    status = _OFFER_RESALE_STATUS.first(offer_id=offer_id)
    with transaction.atomic():
        locked = _LOCKED_OFFER_RESALE.first(using="default", offer_id=offer_id)
    return status, locked


def test_the_resale_of_an_offer_reads_as_the_orm_reads_it(customer, flight):
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer_id = Resale.objects.get(pk=resale.pk).offer_id
    plain = hold(customer, flight)
    for booking_id in (offer_id, plain.pk, r.booking.pk, 10**9):
        for compiled, orm in zip(compiled_reads(booking_id), orm_reads(booking_id), strict=True):
            same_row(compiled, orm)
    assert compiled_reads(offer_id)[0].status == "OFFERED"
    assert compiled_reads(offer_id)[1].pk == resale.pk
    withdraw_resale(customer=r.seller, booking_id=r.booking.pk)  # the offer is let go
    assert compiled_reads(offer_id) == (None, None) == orm_reads(offer_id)


def test_the_confirmations_resale_read_still_locks_the_row(customer, flight):
    compiled_reads(hold(customer, flight).pk)  # compiled on this connection already
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        _LOCKED_OFFER_RESALE.first(using="default", offer_id=1)
    (sql,) = [q["sql"] for q in queries.captured_queries]
    assert "FOR UPDATE" in sql and '"bookings_resale"' in sql, sql


def test_the_payment_with_its_booking_status_reads_as_the_orm_reads_it(customer, flight):
    client = api_client(customer)
    held = hold(customer, flight, seats=["12A"])
    assert pay(client, held).status_code == 202  # a hosted checkout: PENDING, booking HELD
    paid = hold(customer, flight, seats=["12B"])
    assert pay(client, paid, key="key-2", paymentMethod=GOOD_CARD).status_code == 201
    for booking in (held, paid):
        orm = (
            Payment.objects.annotate(current_booking_status=F("booking__status"))
            .filter(booking=booking)
            .get()
        )
        compiled, status = payment_with_booking_status(orm.pk)
        same_row(compiled, orm)
        assert status == orm.current_booking_status == Booking.objects.get(pk=booking.pk).status
    with pytest.raises(Payment.DoesNotExist):
        payment_with_booking_status(10**9)


def _orm_success(payment: Payment, *, reference: str, now) -> int:
    """What `payments.outcomes._mark_succeeded` sends, as the ORM would write it."""
    return (
        Payment.objects.filter(pk=payment.pk, booking_id=payment.booking_id)
        .exclude(status__in=SETTLED_PAYMENT_STATUSES)
        .update(
            status="SUCCEEDED",
            gateway_reference=Coalesce(Value(reference or None), F("gateway_reference")),
            failure_reason="",
            succeeded_at=now,
            updated_at=now,
        )
    )


@pytest.mark.parametrize("reference", ["ch_sent", ""])
def test_a_confirmation_sends_the_orms_own_payment_update(customer, flight, monkeypatch, reference):
    """The payment's lock read and its UPDATE are one guarded UPDATE ... RETURNING the
    columns the lock read selected, in its order; an empty reference keeps the stored one."""
    payment = payment_in_flight(hold(customer, flight))
    Payment.objects.filter(pk=payment.pk).update(gateway_reference="ch_stored")
    now = timezone.now()
    monkeypatch.setattr("payments.outcomes.timezone.now", lambda: now)

    def updates(run) -> list[str]:
        with transaction.atomic(), CaptureQueriesContext(connection) as queries:
            run()
            transaction.set_rollback(True)
        return [q["sql"] for q in queries.captured_queries if '"payments_payment"' in q["sql"]]

    orm = updates(lambda: _orm_success(payment, reference=reference, now=now))
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        Payment.objects.select_for_update().filter(pk=payment.pk).first()
    select = queries.captured_queries[0]["sql"]
    columns = select[len("SELECT ") : select.index(" FROM ")]
    ours = updates(lambda: confirm_payment(payment_id=payment.pk, reference=reference))
    assert [sql for sql in ours if sql.startswith("UPDATE")] == [f"{orm[0]} RETURNING {columns}"]
    confirmed = confirm_payment(payment_id=payment.pk, reference=reference)
    # What it answers is the row as the ORM reads it back.
    same_row(confirmed, Payment.objects.get(pk=payment.pk))
    assert confirmed.status == "SUCCEEDED" and confirmed.succeeded_at == now
    assert confirmed.gateway_reference == (reference or "ch_stored")


def test_the_guarded_success_update_changes_no_settled_nor_other_bookings_payment(customer, flight):
    """Its guard, against the ORM's: a settled payment, or one named with another booking,
    is left alone (the confirmation then reads it to say which: a duplicate, or a
    ValueError), and an unsettled one is taken, even a failed one (a late success)."""
    now = timezone.now()
    other = hold(customer, flight, seats=["20A"]).pk
    cases = [
        ("PROCESSING", False, True),
        ("PENDING", False, True),
        ("FAILED", False, True),
        ("SUCCEEDED", False, False),
        ("REFUND_REQUIRED", False, False),
        ("REFUNDED", False, False),
        ("PROCESSING", True, False),
    ]
    for row, (status, elsewhere, taken) in enumerate(cases, start=2):
        payment = payment_in_flight(hold(customer, flight, seats=[f"{row + 10}A"]))
        Payment.objects.filter(pk=payment.pk).update(status=status)
        booking_id = other if elsewhere else payment.booking_id
        with transaction.atomic():
            ours = _mark_succeeded(payment.pk, booking_id=booking_id, reference="ch", now=now)
            transaction.set_rollback(True)
        payment.booking_id = booking_id
        with transaction.atomic():
            orm = _orm_success(payment, reference="ch", now=now)
            transaction.set_rollback(True)
        assert (ours is not None) == bool(orm) == taken, (status, elsewhere)
        assert Payment.objects.get(pk=payment.pk).status == status  # rolled back


def test_the_stored_answer_reads_back_as_the_orm_reads_it(customer, flight):
    client = api_client(customer)
    held = hold(customer, flight, seats=["12A"])
    first = pay(client, held, key="key-3", paymentMethod=GOOD_CARD)
    payment = Payment.objects.get(booking=held)
    orm = Payment.objects.values_list("response_status", "response_body").get(pk=payment.pk)
    assert _STORED_RESPONSE.rows(payment_id=payment.pk) == [orm]
    assert (first.status_code, first.json()) == orm
    assert _STORED_RESPONSE.rows(payment_id=10**9) == []


def test_storing_the_answer_sends_the_orms_own_update(customer, flight, monkeypatch):
    payment = payment_in_flight(hold(customer, flight))
    now = timezone.now()
    monkeypatch.setattr("payments.charging.timezone.now", lambda: now)
    current, booking_status = payment_with_booking_status(payment.pk)
    status, body = payment_response(current, booking_status=booking_status)

    def updates(run) -> list[str]:
        with transaction.atomic(), CaptureQueriesContext(connection) as queries:
            run()
            transaction.set_rollback(True)
        return [q["sql"] for q in queries.captured_queries if q["sql"].startswith("UPDATE")]

    orm = updates(
        lambda: Payment.objects.filter(pk=payment.pk, response_status__isnull=True).update(
            response_status=status, response_body=body, updated_at=now
        )
    )
    # The ORM's update, returning the columns the ORM's read-back selects, in its order.
    with CaptureQueriesContext(connection) as queries:
        read_back = list(
            Payment.objects.filter(pk=payment.pk)
            .order_by()
            .values_list("response_status", "response_body")
        )
    select = queries.captured_queries[0]["sql"]
    columns = re.sub(r' AS "\w+"', "", select[len("SELECT ") : select.index(" FROM ")])
    assert updates(lambda: store_response(payment.pk)) == [f"{orm[0]} RETURNING {columns}"]
    # ...and the first answer stored wins: a second store changes nothing.
    first = store_response(payment.pk)
    assert (first.status, first.body) == (status, body)
    # What it answers is the stored row as the ORM reads it back, in jsonb's key order.
    [(stored_status, stored_body)] = Payment.objects.filter(pk=payment.pk).values_list(
        "response_status", "response_body"
    )
    assert read_back == [(None, None)]
    assert json.dumps(first.body) == json.dumps(stored_body) != json.dumps(body)
    assert first.status == stored_status
    Payment.objects.filter(pk=payment.pk).update(status="FAILED")
    assert store_response(payment.pk) == first
    stored = Payment.objects.get(pk=payment.pk)
    assert (stored.response_status, stored.response_body, stored.updated_at) == (status, body, now)


def resale_statements(payment: Payment) -> list[str]:
    """The confirmation's statements on the resale, besides the booking's lock (whose
    statement says whether a resale names the booking as its offer: payments.outcomes)."""
    with CaptureQueriesContext(connection) as queries:
        confirm_payment(payment_id=payment.pk, booking_id=payment.booking_id)
    return [
        q["sql"]
        for q in queries.captured_queries
        if '"bookings_resale"' in q["sql"] and not q["sql"].startswith('SELECT "bookings_booking"')
    ]


def test_a_booking_read_to_be_no_resale_offer_skips_the_resales_lock_read(customer, flight):
    # Whether a resale names the booking is read with the booking's lock; no row there means
    # no row ever (an offer's resale names it in the offer's own transaction), so nothing to
    # read again nor lock (h-order: the status read went into the lock's statement).
    plain = payment_in_flight(hold(customer, flight))
    sent = resale_statements(plain)
    assert sent == [], sent
    assert Booking.objects.get(pk=plain.booking_id).status == "CONFIRMED"
    # A resale offer still takes the resale's lock and is sold as a resale.
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer = Booking.objects.get(pk=Resale.objects.get(pk=resale.pk).offer_id)
    name(offer)
    sent = resale_statements(payment_in_flight(offer))
    assert [("FOR UPDATE" in sql) for sql in sent[:2]] == [False, True], sent
    assert Resale.objects.get(pk=resale.pk).status == "SOLD"
    assert Booking.objects.get(pk=offer.pk).status == "CONFIRMED"
