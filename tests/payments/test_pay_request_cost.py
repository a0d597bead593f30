"""What one pay request costs the database: a budget of statements (bench/request_cost.py's
`pay` scenario measures the CPU; docs/performance.md, "Issue 26: the pay request"), no
permission lookup when paying for one's own booking, and the booking a confirmation is told
must be its payment's; the webhook of a success already applied takes no lock."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from bookings.models import Booking, BookingStatus
from payments import charging
from payments.models import Payment, PaymentStatus, WebhookEvent
from payments.outcomes import confirm_payment
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)

pytestmark = pytest.mark.django_db(transaction=True)

# Statements of a card payment that confirms (BEGIN and COMMIT included).  The starting
# commit of this pass (55745c2) made 39 here, two of them the permission lookup; h-pay4
# stores the answer with UPDATE ... RETURNING and skips the resale's lock read of a booking
# read to be no resale offer (30 -> 28), and the sandbox writes its charge and event in one
# statement, not a transaction of two (28 -> 25); h-order reads the booking and its key's
# payment in one statement, records the payment without BEGIN/COMMIT, and reads the
# passengers once under the confirmation's lock and whether the booking is a resale offer with
# that lock (25 -> 20); h-pay reads whether a waitlist entry names the booking as its offer
# with that lock too, and sends the entry's UPDATE only then (20 -> 19), and locks and sells
# the seats in one statement (bookings/seat_sale.py, 19 -> 18); h-paytrips reads the sale with
# the booking, on recording and with the confirmation's lock (locking the booking only), takes
# the payment's lock with its guarded SUCCEEDED update (UPDATE ... RETURNING, no lock read)
# and answers from the row that update returned, without reading it back after COMMIT
# (18 -> 14); raise this only with a reason.
PAY_STATEMENTS = 14


@pytest.fixture(autouse=True)
def _request_only(settings):
    """The request's own statements: in tests Celery runs eagerly, so the outbox relay and the
    sandbox's webhook (a worker's and another request's work) would run inside `pay`."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def _paid(client, booking) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = pay(client, booking, key=f"key-{booking.pk}", paymentMethod=GOOD_CARD)
    assert response.status_code == 201, response.content
    assert response.json()["bookingStatus"] == "CONFIRMED"
    return [q["sql"] for q in queries.captured_queries]


def _second_payment(customer, flight) -> list[str]:
    client = api_client(customer)
    _paid(client, hold(customer, flight, seats=["12A"]))  # first: per-connection compiles
    return _paid(client, hold(customer, flight, seats=["12B"]))


def test_a_card_payment_stays_within_its_statement_budget(customer, flight):
    statements = _second_payment(customer, flight)
    assert len(statements) <= PAY_STATEMENTS, "\n".join(statements)


def test_the_budget_fails_when_a_round_trip_comes_back(customer, flight, monkeypatch):
    """The control: the answer built from the payment and its booking read again after the
    commit (as before h-paytrips) is one statement over the budget."""
    store_response = charging.store_response
    monkeypatch.setattr(
        "payments.paying.store_response", lambda payment_id, known=None: store_response(payment_id)
    )
    statements = _second_payment(customer, flight)
    assert len(statements) == PAY_STATEMENTS + 1, "\n".join(statements)
    assert statements[-2].startswith('SELECT "payments_payment"'), statements[-2]


def test_paying_for_ones_own_booking_reads_no_permissions(customer, flight):
    # Only an agent may pay another customer's booking (tests/api/test_access_matrix.py): the
    # permission behind that is asked only when the booking is someone else's.
    statements = _paid(api_client(customer), hold(customer, flight))
    assert not [sql for sql in statements if "auth_permission" in sql]


def test_a_confirmation_told_another_booking_changes_nothing(customer, other_customer, flight):
    client = api_client(customer)
    booking = hold(customer, flight, seats=["12A"])
    assert pay(client, booking).status_code == 202  # a hosted checkout, left PENDING
    payment = Payment.objects.get(booking=booking)
    other = hold(other_customer, flight, seats=["12B"])
    with pytest.raises(ValueError, match="is not booking"):
        confirm_payment(payment_id=payment.pk, booking_id=other.pk)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.PENDING
    assert set(Booking.objects.values_list("status", flat=True)) == {BookingStatus.HELD}


def test_the_webhook_of_a_payment_already_confirmed_takes_no_lock(customer, flight):
    client = api_client(customer)
    booking = hold(customer, flight)
    _paid(client, booking)
    payment = Payment.objects.get(booking=booking)
    body, headers = signed(sandbox_event(payment))
    with CaptureQueriesContext(connection) as queries:
        response = post_webhook(APIClient(), body, headers)
    assert response.status_code == 200, response.content
    statements = [q["sql"] for q in queries.captured_queries]
    assert not [sql for sql in statements if "FOR UPDATE" in sql], "\n".join(statements)
    assert WebhookEvent.objects.get().outcome == f"payment {payment.pk} is SUCCEEDED"
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
