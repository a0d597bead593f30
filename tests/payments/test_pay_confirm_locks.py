"""The confirmation's locks in fewer round trips (payments.outcomes.confirm_payment): the
booking's lock reads its sale and the sale's catalogue item without locking them, and the
payment's lock is its guarded SUCCEEDED update's, not a read's (docs/performance.md, "Issue
26: the pay request's round trips")."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection
from django.db.models import IntegerField, Value

from bookings.errors import InvalidBookingState
from bookings.models import Booking, BookingStatus
from kernel.compiled import CompiledRead
from kernel.errors import TooBusy
from payments.models import Payment, PaymentStatus
from payments.outcomes import confirm_payment
from tests.payments.helpers import hold
from tests.payments.resale_setup import payment_in_flight
from tests.payments.test_pay_record_step import statements_of_a_plain_pay

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _request_only(settings):
    """The request's own statements (Celery runs eagerly in tests)."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


# --- the booking's lock reads its sale, and locks the booking only ----------------------------


def _confirm_while_the_sale_is_locked(payment: Payment, sale_id: int):
    """`confirm_payment` while another transaction holds the sale's row and its flight's
    (a staff edit, say), waiting at most half a second for any lock."""
    settings = connection.settings_dict
    dsn = {
        "dbname": settings["NAME"],
        "user": settings["USER"],
        "host": settings["HOST"],
        "port": settings["PORT"] or 5432,
    }
    with psycopg.connect(**dsn, autocommit=False) as other:
        other.execute("SELECT 1 FROM bookings_sale WHERE id = %s FOR UPDATE", [sale_id])
        other.execute("SELECT 1 FROM flights_flight WHERE sale_id = %s FOR UPDATE", [sale_id])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '500ms'")
        try:
            return confirm_payment(payment_id=payment.pk, reference="ch_test")
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
            other.rollback()


def test_the_confirmation_reads_the_sale_without_locking_it(customer, flight):
    """The sale and its catalogue item come with the booking's lock (one statement, not a
    read of their own), FOR UPDATE OF the booking only: a confirmation never waits on them."""
    statements = statements_of_a_plain_pay(customer, flight)
    (lock,) = [sql for sql in statements if "FOR UPDATE" in sql and "bookings_booking" in sql]
    assert '"bookings_sale"' in lock and '"flights_flight"' in lock, lock
    assert not [sql for sql in statements[5:] if sql.startswith('SELECT "bookings_sale"')]
    payment = payment_in_flight(hold(customer, flight, seats=["14A"]))
    confirmed = _confirm_while_the_sale_is_locked(payment, flight.sale_id)
    assert confirmed.status == PaymentStatus.SUCCEEDED
    assert Booking.objects.get(pk=payment.booking_id).status == BookingStatus.CONFIRMED


def test_control_a_lock_on_the_sale_too_would_wait(customer, flight, monkeypatch):
    """The control: the same read locking the sale as well waits for the other transaction
    (TooBusy, 503) and sells nothing."""
    monkeypatch.setattr(
        "payments.outcomes._LOCKED_BOOKING",
        CompiledRead(
            Booking,
            lambda booking_id: (
                Booking.objects.select_for_update(of=("self", "sale"))
                .select_related("sale")
                .annotate(
                    offer_resale_id=Value(None, IntegerField()),
                    offer_entry_id=Value(None, IntegerField()),
                )
                .filter(pk=booking_id)[:1]
            ),
            booking_id=int,
        ),
    )
    payment = payment_in_flight(hold(customer, flight, seats=["14A"]))
    with pytest.raises(TooBusy):
        _confirm_while_the_sale_is_locked(payment, flight.sale_id)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.PROCESSING
    assert Booking.objects.get(pk=payment.booking_id).status == BookingStatus.HELD


# --- the payment's guarded UPDATE -------------------------------------------------------------


def test_a_success_update_that_changes_nothing_for_an_unsettled_payment_sells_nothing(
    customer, flight, monkeypatch
):
    """The guarded UPDATE takes every unsettled payment of the booking (under the booking's
    lock nothing else settles it), so one that changed nothing, the payment still unsettled,
    is refused rather than sold or refunded; the control is the sale when it took it."""
    payment = payment_in_flight(hold(customer, flight, seats=["14A"]))
    monkeypatch.setattr("payments.outcomes._mark_succeeded", lambda *args, **kwargs: None)
    with pytest.raises(InvalidBookingState):
        confirm_payment(payment_id=payment.pk, reference="ch_test")
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.PROCESSING
    assert Booking.objects.get(pk=payment.booking_id).status == BookingStatus.HELD
    monkeypatch.undo()
    assert confirm_payment(payment_id=payment.pk, reference="ch_test").status == "SUCCEEDED"
    assert Booking.objects.get(pk=payment.booking_id).status == BookingStatus.CONFIRMED
