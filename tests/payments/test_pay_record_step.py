"""The pay request in fewer round trips, the same rows and answers.  Its first step
(payments.paying.record_payment): the booking, its sale and "is this key used in its sale?"
in one statement (`_BOOKING_AND_KEY`, compared with the ORM's three reads), and the payment's INSERT
alone in autocommit instead of BEGIN, the checks' reads, INSERT, COMMIT (inside a caller's
transaction the INSERT keeps its savepoint).  Its confirmation reads the passengers once
under the booking's lock, for the names' check and for `booking.confirmed`, and learns
whether the booking is a resale offer, or a waitlist entry's offer, from that lock's own
statement (docs/performance.md, "Issue 26: the order's CPU by process", "Issue 26: the pay's
publish and waitlist UPDATE")."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from bookings import catalogue
from bookings.lifecycle import _PASSENGERS_SOLD
from bookings.models import (
    Booking,
    BookingStatus,
    Passenger,
    Resale,
    ResaleStatus,
    WaitlistEntry,
    WaitlistStatus,
)
from bookings.resale import withdraw_resale
from kernel.models import OutboxEvent
from payments.errors import PaymentInProgress
from payments.models import Payment, PaymentStatus
from payments.outcomes import _LOCKED_BOOKING, confirm_payment
from payments.paying import _BOOKING_AND_KEY, _PAYMENT_BY_KEY, record_payment
from payments.resale import list_booking_for_resale
from payments.selectors import sale_of
from tests.factories import FlightFactory
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)
from tests.payments.test_pay_compiled_reads import same_row

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _request_only(settings):
    """The request's own statements (Celery runs eagerly in tests)."""
    settings.OUTBOX = {**settings.OUTBOX, "KICK_ON_COMMIT": False}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def orm_reads(booking_id: int, customer_id: int, key: str):
    booking = Booking.objects.filter(pk=booking_id).first()
    if booking is None:
        return None, None
    keyed = Payment.objects.filter(
        sale_id=booking.sale_id, customer_id=customer_id, idempotency_key=key
    ).first()
    return booking, keyed.pk if keyed else None


def compiled_read(booking_id: int, customer_id: int, key: str):
    booking = _BOOKING_AND_KEY.first(booking_id=booking_id, customer_id=customer_id, key=key)
    return booking, booking.keyed_payment_id if booking else None


def test_the_booking_and_its_keys_payment_read_as_the_orm_reads_them(
    customer, other_customer, flight
):
    client = api_client(customer)
    paid = hold(customer, flight, seats=["12A"])
    assert pay(client, paid, key="used", paymentMethod=GOOD_CARD).status_code == 201
    fresh = hold(customer, flight, seats=["12B"])
    elsewhere = hold(customer, FlightFactory(), seats=["12A"])  # another sale
    cases = [
        (fresh.pk, customer.pk, "used"),  # the key is used in this sale: found
        (paid.pk, customer.pk, "used"),
        (fresh.pk, customer.pk, "new"),  # a new key
        (fresh.pk, other_customer.pk, "used"),  # another customer's key is not theirs
        (elsewhere.pk, customer.pk, "used"),  # the key's scope is one sale
        (10**9, customer.pk, "used"),  # no such booking
    ]
    answers = []
    for booking_id, customer_id, key in cases:
        (booking, keyed), (orm_booking, orm_keyed) = (
            compiled_read(booking_id, customer_id, key),
            orm_reads(booking_id, customer_id, key),
        )
        same_row(booking, orm_booking)
        assert keyed == orm_keyed
        if booking is not None:  # ...with its sale and the sale's catalogue item
            _same_sale(booking.sale, sale_of(orm_booking))
        if booking is not None and keyed is not None:
            found = _PAYMENT_BY_KEY.first(sale_id=booking.sale_id, customer_id=customer_id, key=key)
            assert found.pk == keyed
        answers.append(keyed)
    used = Payment.objects.get(booking=paid).pk
    assert answers == [used, used, None, None, None, None]


def _same_sale(joined, read) -> None:
    """A sale read with its booking is the one `sale_of` reads, catalogue item included."""
    same_row(joined, read)
    paths = catalogue.owner_paths()
    assert paths
    for path in paths:
        same_row(getattr(joined, path, None), getattr(read, path, None))


def _record(customer, booking, key: str):
    return record_payment(
        customer=customer,
        booking_id=booking.pk,
        key=key,
        fingerprint=f"fp-{key}",
        amount=None,
        currency=None,
    )


def test_a_new_payment_is_one_read_then_its_insert_alone(customer, flight):
    booking = hold(customer, flight, seats=["12A"])
    _record(customer, hold(customer, flight, seats=["12B"]), "warm-up")  # per-connection compiles
    with CaptureQueriesContext(connection) as queries:
        payment = _record(customer, booking, "k1")
    statements = [q["sql"] for q in queries.captured_queries]
    assert isinstance(payment, Payment) and payment.status == PaymentStatus.PROCESSING
    assert statements[0].startswith('SELECT "bookings_booking"'), statements
    assert '"payments_payment"' in statements[0]  # the key's look-up, in the same statement
    assert statements[-1].startswith('INSERT INTO "payments_payment"'), statements
    assert not [sql for sql in statements if sql in ("BEGIN", "COMMIT")], statements
    assert Payment.objects.get(pk=payment.pk).idempotency_key == "k1"  # committed


def test_a_used_key_reads_its_payment_and_replays(customer, flight):
    client = api_client(customer)
    booking = hold(customer, flight, seats=["12A"])
    first = pay(client, booking, key="k1", paymentMethod=GOOD_CARD)
    again = pay(client, booking, key="k1", paymentMethod=GOOD_CARD)
    assert again.status_code == first.status_code == 201
    assert again.content == first.content
    different = pay(client, booking, key="k1")  # the same key, another request
    assert different.status_code == 422, different.content
    assert Payment.objects.filter(booking=booking).count() == 1


def test_a_refused_insert_in_a_callers_transaction_leaves_it_usable(customer, flight):
    booking = hold(customer, flight, seats=["12A"])
    in_flight = _record(customer, booking, "k1")  # PROCESSING: one in flight per booking
    with transaction.atomic():
        with pytest.raises(PaymentInProgress) as refused:
            _record(customer, booking, "k2")  # the constraint refuses the second INSERT
        assert refused.value.extra["paymentId"] == in_flight.pk
        # Still usable: the refusal was rolled back to the INSERT's savepoint.
        assert Booking.objects.filter(pk=booking.pk).exists()
    assert list(Payment.objects.values_list("idempotency_key", flat=True)) == ["k1"]


def test_a_refused_insert_in_autocommit_answers_the_other_attempt(customer, flight):
    booking = hold(customer, flight, seats=["12A"])
    in_flight = _record(customer, booking, "k1")
    with pytest.raises(PaymentInProgress) as refused:
        _record(customer, booking, "k2")
    assert refused.value.extra["paymentId"] == in_flight.pk
    assert Booking.objects.filter(pk=booking.pk).exists()  # the connection is usable
    assert list(Payment.objects.values_list("idempotency_key", flat=True)) == ["k1"]


# --- the confirmation reads the passengers once ------------------------------------------------


def _passenger_reads(statements: list[str]) -> list[str]:
    return [sql for sql in statements if sql.startswith("SELECT") and "bookings_passenger" in sql]


def test_a_confirmation_reads_its_passengers_once(customer, flight):
    client = api_client(customer)
    pay(client, hold(customer, flight, seats=["12A"]), key="warm-up", paymentMethod=GOOD_CARD)
    booking = hold(customer, flight, seats=["12B", "12C"])
    with CaptureQueriesContext(connection) as queries:
        answer = pay(client, booking, key="k1", paymentMethod=GOOD_CARD)
    assert answer.json()["bookingStatus"] == "CONFIRMED", answer.content
    statements = [q["sql"] for q in queries.captured_queries]
    # One on recording (payments.paying's names check), one under the booking's lock.
    assert len(_passenger_reads(statements)) == 2, "\n".join(statements)


def test_the_names_check_and_the_event_read_the_same_rows_as_before(customer, flight):
    """The confirmation's one read answers both as the two reads did: the names' rule looks at
    live passengers only (`check_passengers_named`), `booking.confirmed` lists every passenger
    by id (`lifecycle._PASSENGERS_SOLD`)."""
    booking = hold(customer, flight, seats=["12A", "12B"])
    first, second = Passenger.objects.filter(booking=booking).order_by("id")
    # A passenger no longer live (edited by hand) and nameless: the names' rule ignores it,
    # the event lists it, as before.
    Passenger.objects.filter(pk=second.pk).update(is_live=False, full_name="")
    expected = [
        {"passengerId": pk, "fullName": name, "seat": seat}
        for pk, name, seat in _PASSENGERS_SOLD.rows(booking_id=booking.pk)
    ]
    assert [p["passengerId"] for p in expected] == [first.pk, second.pk]
    # Named on recording it was (the live one); the confirmation checks again under the lock.
    answer = pay(api_client(customer), booking, key="k1", paymentMethod=GOOD_CARD)
    assert answer.status_code == 201 and answer.json()["bookingStatus"] == "CONFIRMED"
    event = OutboxEvent.objects.get(event_type="booking.confirmed")
    assert event.payload["passengers"] == expected


def test_a_live_passenger_unnamed_by_the_confirmation_is_refunded(customer, flight):
    """The control of the rule on the merged read: a live nameless passenger, caught only
    under the lock (nameless after the payment was recorded), still means no sale."""
    booking = hold(customer, flight, seats=["12A"])
    payment = _record(customer, booking, "k1")
    Passenger.objects.filter(booking=booking).update(full_name=" ")  # edited by hand
    confirmed = confirm_payment(payment_id=payment.pk, reference="ch_test")
    assert confirmed.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


# --- the confirmation's booking lock says whether the booking is a resale offer ---------------


def _locked_reads(booking_id: int):
    with transaction.atomic():
        compiled = _LOCKED_BOOKING.first(using="default", booking_id=booking_id)
        orm = Booking.objects.select_for_update().filter(pk=booking_id).first()
        offer = Resale.objects.filter(offer_id=booking_id).values_list("pk", flat=True).first()
        entry = (
            WaitlistEntry.objects.filter(offer_id=booking_id).values_list("pk", flat=True).first()
        )
    if compiled is not None:
        assert compiled.offer_entry_id == entry
        # ...and its sale with the sale's catalogue item, as `sale_of` reads them.
        _same_sale(compiled.sale, sale_of(orm))
    return compiled, orm, offer


def test_the_booking_lock_reads_the_booking_and_its_offer_resale_as_the_orm(customer, flight):
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer_id = Resale.objects.get(pk=resale.pk).offer_id
    plain = hold(customer, flight)
    for booking_id, expected in ((offer_id, resale.pk), (plain.pk, None), (r.booking.pk, None)):
        compiled, orm, offer = _locked_reads(booking_id)
        same_row(compiled, orm)
        assert compiled.offer_resale_id == offer == expected
    assert _locked_reads(10**9)[:2] == (None, None)
    withdraw_resale(customer=r.seller, booking_id=r.booking.pk)  # the offer is let go
    compiled, orm, offer = _locked_reads(offer_id)
    assert compiled.offer_resale_id is None is offer


def statements_of_a_plain_pay(customer, flight) -> list[str]:
    """The SQL of a confirmed card payment of a booking that is no offer (after a warm-up
    payment, so that nothing of the first request's is among them)."""
    client = api_client(customer)
    pay(client, hold(customer, flight, seats=["12A"]), key="warm-up", paymentMethod=GOOD_CARD)
    booking = hold(customer, flight, seats=["12B"])
    with CaptureQueriesContext(connection) as queries:
        answer = pay(client, booking, key="k1", paymentMethod=GOOD_CARD)
    assert answer.json()["bookingStatus"] == "CONFIRMED", answer.content
    return [q["sql"] for q in queries.captured_queries]


def test_a_confirmation_of_no_resale_offer_reads_no_resale_of_its_own(customer, flight):
    statements = statements_of_a_plain_pay(customer, flight)
    resale_reads = [sql for sql in statements if '"bookings_resale"' in sql]
    # Only inside the booking's lock, which still locks it.
    (lock,) = resale_reads
    assert lock.startswith('SELECT "bookings_booking"'), lock
    assert lock.endswith('FOR UPDATE OF "bookings_booking"'), lock


def confirm_a_resale_offer():
    """A sold-out event's paid booking put up for resale, its offer to the waiting customer
    named and paid: (the resale, the offer, the waitlist entry, the confirmation's SQL)."""
    r = sold_out_event_with_paid_booking()
    _, entry = wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer = Booking.objects.get(pk=resale.offer_id)
    name(offer)
    payment = payment_in_flight(offer)
    with CaptureQueriesContext(connection) as queries:
        confirm_payment(payment_id=payment.pk, reference="ch_test")
    return resale, offer, entry, [q["sql"] for q in queries.captured_queries]


def test_a_resale_offer_is_still_sold_as_one(customer):
    """The control: an offer's confirmation reads its resale again and hands it over."""
    resale, offer, _, statements = confirm_a_resale_offer()
    assert len([sql for sql in statements if '"bookings_resale"' in sql]) >= 2
    assert Resale.objects.get(pk=resale.pk).status == ResaleStatus.SOLD
    assert Booking.objects.get(pk=offer.pk).status == BookingStatus.CONFIRMED


# --- ...and whether a waitlist entry names it as its offer -------------------------------------


def _waitlist_updates(statements: list[str]) -> list[str]:
    return [sql for sql in statements if sql.startswith('UPDATE "waitroom_waitlistentry"')]


def test_the_booking_lock_reads_its_waitlist_entry_as_the_orm(customer, flight):
    r = sold_out_event_with_paid_booking()
    _, entry = wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer_id = Resale.objects.get(pk=resale.pk).offer_id
    assert WaitlistEntry.objects.get(pk=entry.pk).offer_id == offer_id
    for booking_id, expected in ((offer_id, entry.pk), (hold(customer, flight).pk, None)):
        compiled, orm, _ = _locked_reads(booking_id)  # compares offer_entry_id with the ORM
        same_row(compiled, orm)
        assert compiled.offer_entry_id == expected


def test_a_confirmation_of_no_waitlist_offer_sends_no_waitlist_update(customer, flight):
    assert _waitlist_updates(statements_of_a_plain_pay(customer, flight)) == []


def test_a_waitlist_offer_is_still_marked_booked(customer):
    """The control: the confirmation of an entry's offer still sends the UPDATE, and the
    entry is BOOKED (tests/storefront/test_waitlist_api.py pays a fare class's offer)."""
    _, offer, entry, statements = confirm_a_resale_offer()
    assert len(_waitlist_updates(statements)) == 1
    assert WaitlistEntry.objects.get(pk=entry.pk).status == WaitlistStatus.BOOKED
    assert Booking.objects.get(pk=offer.pk).status == BookingStatus.CONFIRMED
