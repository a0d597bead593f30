"""A confirmation takes the sale's hot fare-inventory row as late as the lock order lets it:
its UPDATE is followed only by the booking classes' counters and the waitlist's offer (after it
in the lock order, docs/architecture.md "Lock order"), then COMMIT, so every other hold and
confirmation of the fare class waits for the row through those and the commit's WAL flush
only, not through the passengers' read, the outbox event and the payment's update
(docs/performance.md, "Issue 26: the confirmation's hot row")."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from bookings.models import Booking, Inventory
from kernel.models import OutboxEvent
from payments.models import Payment
from payments.outcomes import confirm_payment
from tests.payments.helpers import hold
from tests.payments.resale_setup import payment_in_flight

pytestmark = pytest.mark.django_db(transaction=True)

# What may follow the inventory's UPDATE before COMMIT: the rows after it in the lock order.
AFTER_INVENTORY = ('UPDATE "bookings_bookingclass"', 'UPDATE "waitroom_waitlistentry"')


def test_the_inventory_row_is_the_confirmations_last_lock(customer, flight):
    payment = payment_in_flight(hold(customer, flight))
    # Inside an outer transaction, so what runs once committed (the relay's kick) is not
    # captured with the transaction's own statements.
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        confirm_payment(payment_id=payment.pk, reference="ch_late")
    sent = [
        q["sql"]
        for q in queries.captured_queries
        if not q["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))
    ]
    (at,) = [i for i, sql in enumerate(sent) if sql.startswith('UPDATE "bookings_inventory"')]
    assert all(sql.startswith(AFTER_INVENTORY) for sql in sent[at + 1 :]), sent[at:]
    before = sent[:at]
    # The lock order kept: booking, payment, seats, then the inventory.  The payment's lock
    # is its guarded UPDATE's (payments.outcomes._mark_succeeded), not a read's.
    locks = [
        i
        for i, sql in enumerate(before)
        if "FOR UPDATE" in sql or sql.startswith('UPDATE "payments_payment"')
    ]
    tables = [_locked_table(before[i]) for i in locks]
    assert tables == ['"bookings_booking"', '"payments_payment"', '"bookings_seat"'], tables
    # The statements that used to run under the inventory's lock now run before it.
    for statement in ('UPDATE "payments_payment"', 'INSERT INTO "bookings_outboxevent"'):
        assert any(sql.startswith(statement) for sql in before), statement
    assert sum('"bookings_passenger"' in sql for sql in before) >= 1
    # ...and the sale is what it was: counters moved, the event and the payment written.
    assert Booking.objects.get(pk=payment.booking_id).status == "CONFIRMED"
    assert Payment.objects.get(pk=payment.pk).status == "SUCCEEDED"
    assert OutboxEvent.objects.filter(
        aggregate_id=payment.booking_id, event_type="booking.confirmed"
    ).exists()


def test_a_sale_failing_at_the_inventory_writes_nothing(customer, flight, monkeypatch):
    # The payment's row is now written before the sale: one transaction still, so a sale that
    # fails at its last lock leaves the payment in flight and the hold as it was.
    payment = payment_in_flight(hold(customer, flight))
    booking = Booking.objects.get(pk=payment.booking_id)
    counters = Inventory.objects.values_list("held", "sold").get(
        sale_id=booking.sale_id, fare_class=booking.fare_class
    )

    def refused(booking):
        raise RuntimeError("the inventory's UPDATE failed")

    monkeypatch.setattr("bookings.lifecycle._move_held_to_sold", refused)
    with pytest.raises(RuntimeError):
        confirm_payment(payment_id=payment.pk, reference="ch_late")
    assert Payment.objects.get(pk=payment.pk).status == payment.status
    assert Booking.objects.get(pk=booking.pk).status == "HELD"
    assert not OutboxEvent.objects.filter(
        aggregate_id=booking.pk, event_type="booking.confirmed"
    ).exists()
    assert (
        Inventory.objects.values_list("held", "sold").get(
            sale_id=booking.sale_id, fare_class=booking.fare_class
        )
        == counters
    )


def _locked_table(sql: str) -> str:
    """The table a lock read locks: its statement's own FROM, the last one (the booking's lock
    also reads, in subqueries, which lock nothing, whether a resale or a waitlist entry names
    it as its offer; and its sale, joined, locked neither: FOR UPDATE OF the booking).  The
    seats' lock is the CTE of the statement that also sells them (bookings/seat_sale.py): its
    own FROM, then.  An UPDATE locks the table it names (the payment's guarded UPDATE)."""
    if sql.startswith("UPDATE "):
        return sql.split()[1]
    if sql.startswith('WITH "locked" AS ('):
        sql = sql.split('"sold" AS (', 1)[0]
    return sql.rsplit(" FROM ", 1)[1].split()[0]
