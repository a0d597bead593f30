"""Payments under real contention: threads with their own PostgreSQL connections."""

import contextlib
import os
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments import paying
from payments.gateways.sandbox import SandboxGateway, complete_checkout
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundStatus,
    SandboxCharge,
    SandboxRefund,
)
from payments.outcomes import confirm_payment
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory, economy_only_layout
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]

# Each round is a fresh race of the two at one barrier, so a missing booking lock shows in
# any round where they overlap: 60 rounds by default, 200 under SEATKEEPER_NIGHTLY=1.
ROUNDS = 200 if os.environ.get("SEATKEEPER_NIGHTLY") == "1" else 60


def test_20_concurrent_requests_with_one_key_charge_once(customer, flight, monkeypatch):
    booking = hold(customer, flight)
    original = SandboxGateway.create_payment
    calls = []

    def slow_gateway(self, **kwargs):
        calls.append(kwargs["idempotency_key"])
        time.sleep(0.3)  # a real provider takes a while: requests pile up on the same key
        return original(self, **kwargs)

    monkeypatch.setattr(SandboxGateway, "create_payment", slow_gateway)
    clients = [api_client(customer) for _ in range(20)]

    outcomes = run_concurrently(
        [
            lambda c=c: pay(c, booking, key="one-key", amount="208.00", paymentMethod=GOOD_CARD)
            for c in clients
        ]
    )

    assert not outcomes.errors, outcomes.errors[:3]
    statuses = sorted(r.status_code for r in outcomes.results)
    assert set(statuses) <= {201, 409} and statuses.count(201) >= 1, statuses
    successes = [r for r in outcomes.results if r.status_code == 201]
    assert len({str(r.json()) for r in successes}) == 1  # replays carry the stored body
    assert sum(1 for r in successes if "Idempotent-Replayed" not in r) == 1
    for r in outcomes.results:
        if r.status_code == 409:
            assert r.json()["type"].endswith("/idempotency-key-in-flight")
    assert len(calls) == 1 and SandboxCharge.objects.count() == 1
    assert Payment.objects.count() == 1
    assert OutboxEvent.objects.filter(event_type="booking.confirmed").count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []

    # After the dust settles: same key replays, changed amount is 422, no key is 400.
    assert (
        pay(
            clients[0], booking, key="one-key", amount="208.00", paymentMethod=GOOD_CARD
        ).status_code
        == 201
    )
    assert (
        pay(
            clients[0], booking, key="one-key", amount="207.00", paymentMethod=GOOD_CARD
        ).status_code
        == 422
    )
    assert (
        pay(clients[0], booking, key=None, amount="208.00", paymentMethod=GOOD_CARD).status_code
        == 400
    )
    assert SandboxCharge.objects.count() == 1


@pytest.fixture
def without_the_key_constraints():
    """The guard switched off: the unique constraints that make one Idempotency-Key (and one
    payment under way per booking) claimable once are dropped, and put back afterwards."""
    guards = [
        c
        for c in Payment._meta.constraints
        if c.name in ("payment_idempotency_key_per_customer", "payment_one_in_flight_per_booking")
    ]
    assert len(guards) == 2
    with connection.schema_editor() as editor:
        for constraint in guards:
            editor.remove_constraint(Payment, constraint)
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {Payment._meta.db_table} CASCADE")
    with connection.schema_editor() as editor:
        for constraint in guards:
            editor.add_constraint(Payment, constraint)


def test_control_without_the_key_constraints_one_key_charges_more_than_once(
    customer, flight, monkeypatch, without_the_key_constraints
):
    booking = hold(customer, flight)
    original = SandboxGateway.create_payment

    def slow_gateway(self, **kwargs):
        time.sleep(0.3)
        return original(self, **kwargs)

    monkeypatch.setattr(SandboxGateway, "create_payment", slow_gateway)
    # Two requests meet right after looking the key up, before either writes its row: the
    # race the constraints close, made certain even when a loaded machine starts the
    # threads so late that each would otherwise find the one before it and replay.
    # The look-up is the booking's read, which says whether the key is used already
    # (`_BOOKING_AND_KEY`).
    look_up = paying._BOOKING_AND_KEY
    meet = threading.Barrier(2, timeout=5)

    class RacingLookUp:
        def first(self, **values):
            found = look_up.first(**values)
            with contextlib.suppress(threading.BrokenBarrierError):
                meet.wait()
            return found

    monkeypatch.setattr(paying, "_BOOKING_AND_KEY", RacingLookUp())
    clients = [api_client(customer) for _ in range(20)]

    outcomes = run_concurrently(
        [
            lambda c=c: pay(c, booking, key="one-key", amount="208.00", paymentMethod=GOOD_CARD)
            for c in clients
        ]
    )

    assert not outcomes.errors, outcomes.errors[:3]
    # The double effect the guarded test above rules out: one key, several charges.
    assert Payment.objects.filter(idempotency_key="one-key").count() > 1
    assert SandboxCharge.objects.count() > 1


@pytest.mark.nightly
def test_rounds_of_payment_success_racing_hold_expiry():
    flight = FlightFactory(layout=economy_only_layout(rows=35))  # 210 seats
    seat_nos = [f"{row}{letter}" for row in range(1, 36) for letter in "ABCDEF"][:ROUNDS]
    people = [UserFactory() for _ in range(10)]
    results = {"CONFIRMED": 0, "EXPIRED": 0}

    for round_no, seat_no in enumerate(seat_nos):
        customer = people[round_no % 10]
        booking = hold(customer, flight, [seat_no])
        assert pay(api_client(customer), booking, key=f"r{round_no}").status_code == 202
        payment = Payment.objects.get(booking=booking)
        complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
        # The payment arrives before the deadline while the sweep (its clock just past the
        # deadline) runs at the same moment: both are entitled, the booking lock decides.
        deadline = timezone.now() + timedelta(seconds=30)
        Booking.objects.filter(pk=booking.pk).update(expires_at=deadline)
        Seat.objects.filter(booking=booking).update(held_until=deadline)

        outcomes = run_concurrently(
            [
                lambda p=payment: confirm_payment(payment_id=p.pk, reference=p.gateway_reference),
                lambda d=deadline: expire_holds(now=d + timedelta(seconds=1)),
            ]
        )
        assert not outcomes.errors, (round_no, outcomes.errors)

        booking.refresh_from_db()
        payment.refresh_from_db()
        seat = Seat.objects.get(sale=flight.sale, seat_no=seat_no)
        refunds = list(Refund.objects.filter(payment=payment))
        results[booking.status] += 1
        if booking.status == BookingStatus.CONFIRMED:
            assert (seat.status, seat.booking_id) == (SeatStatus.SOLD, booking.pk), round_no
            assert payment.status == PaymentStatus.SUCCEEDED and refunds == [], round_no
        else:
            assert booking.status == BookingStatus.EXPIRED, round_no
            assert (seat.status, seat.booking_id) == (SeatStatus.AVAILABLE, None), round_no
            assert payment.status == PaymentStatus.REFUNDED, round_no
            assert [(r.status, r.amount) for r in refunds] == [
                (RefundStatus.SUCCEEDED, payment.amount)
            ]

    # Never SOLD without a successful payment; never both sold and refunded.
    for seat in Seat.objects.filter(sale=flight.sale, status=SeatStatus.SOLD).select_related(
        "booking"
    ):
        assert seat.booking.status == BookingStatus.CONFIRMED
        assert seat.booking.payments.filter(status=PaymentStatus.SUCCEEDED).count() == 1
    assert not Refund.objects.filter(payment__booking__status=BookingStatus.CONFIRMED).exists()
    inventory = FareInventory.objects.get(sale=flight.sale)
    assert (inventory.sold, inventory.held) == (results["CONFIRMED"], 0)
    assert SandboxRefund.objects.count() == results["EXPIRED"]
    assert (
        OutboxEvent.objects.filter(event_type="booking.confirmed").count() == results["CONFIRMED"]
    )
    assert OutboxEvent.objects.filter(event_type="refund.issued").count() == results["EXPIRED"]
    assert check_inventory(sale_id=flight.sale_id) == []
    # Both sides really won some rounds, so the race was real.
    print(f"\n{ROUNDS} rounds: {results}")
    assert results["CONFIRMED"] > 0 and results["EXPIRED"] > 0, results
