"""A Hypothesis state machine over the services: random sequences of holds (seats and
seatless), cancellations, expiries (time moved), payments, webhook outcomes (success, failure,
duplicate, late), waitlist joins and offers, staff limit changes and seat blocks, with the
invariants checked after every step:

* counters == rows (`check_inventory`), and the CHECKs (0 <= sold, held; sold + held <=
  capacity + overbook) hold;
* at most one live booking per seat;
* money in == money kept + refunds: every paid payment is refunded between nothing and all
  of it, a confirmed booking's payment is refunded nothing, a payment that arrived after its
  hold ended is refunded all of it, and nothing unpaid is refunded.

Each step suppresses only the refusals its operation is expected to answer with (a sold-out
class, a seat someone else holds...); anything else fails the run.  And the run must have
reached every outcome that matters: a confirmation, a refund, an expiry and a waitlist offer
(counted per example in `teardown`, checked after the run), so it cannot pass by refusing
everything.

Size: 25 examples x 30 steps by default (./scripts/test), the same sequences every run
(derandomized); with SEATKEEPER_NIGHTLY=1 (CI's nightly job) 500 random examples x 50 steps.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings as django_settings
from django.db.models import Count, Sum
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import (
    AlreadyWaiting,
    HoldExpired,
    HoldLimitReached,
    InvalidBookingState,
    NotSoldOut,
    PassengerNamesMissing,
    SeatUnavailable,
    SoldOut,
)
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Passenger, WaitlistEntry
from bookings.waitlist import join_waitlist
from flights.models import FareInventory, Seat
from flights.services import block_seat, check_inventory, set_fare_limits, unblock_seat
from kernel.errors import InvalidRequest
from payments.cancellation import cancel_booking
from payments.errors import CancellationRefused, PaymentInProgress
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundStatus,
    SandboxCharge,
    SandboxChargeStatus,
)
from payments.outcomes import confirm_payment, fail_payment
from payments.paying import pay_for_booking
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.nightly]

NIGHTLY = os.environ.get("SEATKEEPER_NIGHTLY") == "1"
EXAMPLES, STEPS = (500, 50) if NIGHTLY else (25, 30)
OUTCOMES = ("confirmation", "refund", "expiry", "waitlist offer")
# How often each outcome was reached, over every example of the current run.
REACHED: Counter[str] = Counter()
SEATS = [f"{row}{letter}" for row in (1, 2) for letter in "ABCDEF"]
PAID = [PaymentStatus.SUCCEEDED, PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED]


class SaleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=1))
        self.inventory = FareInventory.objects.get(sale=self.flight.sale, fare_class="ECONOMY")
        self.customers = [UserFactory() for _ in range(3)]
        self.crowd = [UserFactory() for _ in range(2)]

    def teardown(self) -> None:
        sale = self.flight.sale
        REACHED["confirmation"] += Booking.objects.filter(
            sale=sale, confirmed_at__isnull=False
        ).count()
        REACHED["refund"] += Refund.objects.filter(
            payment__booking__sale=sale, status=RefundStatus.SUCCEEDED
        ).count()
        REACHED["expiry"] += Booking.objects.filter(sale=sale, status=BookingStatus.EXPIRED).count()
        REACHED["waitlist offer"] += WaitlistEntry.objects.filter(
            sale=sale, offered_at__isnull=False
        ).count()

    # --- helpers -------------------------------------------------------------------------

    def _bookings(self, *statuses):
        qs = Booking.objects.filter(sale=self.flight.sale)
        return list(qs.filter(status__in=statuses) if statuses else qs)

    def _payments(self, *statuses):
        return list(Payment.objects.filter(booking__sale=self.flight.sale, status__in=statuses))

    def _lapse(self, booking: Booking) -> None:
        past = timezone.now() - timedelta(seconds=1)
        Booking.objects.filter(pk=booking.pk).update(expires_at=past)
        Seat.objects.filter(booking_id=booking.pk).update(held_until=past)

    def _settle_at_gateway(self, payment: Payment) -> None:
        # The customer finished the hosted checkout: the sandbox charge has the money.
        SandboxCharge.objects.filter(merchant_reference=str(payment.pk)).update(
            status=SandboxChargeStatus.SUCCEEDED
        )

    # --- steps ---------------------------------------------------------------------------

    @rule(
        who=st.integers(0, 2),
        seats=st.lists(st.sampled_from(SEATS), min_size=1, max_size=3, unique=True),
    )
    def hold_seats(self, who, seats):
        # Named, so that the hold can be paid (a nameless one is refused before any payment).
        with contextlib.suppress(SeatUnavailable, SoldOut, HoldLimitReached):
            hold_seats(
                customer=self.customers[who],
                sale_id=self.flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=seats,
                passenger_names=[f"Passenger {seat}" for seat in seats],
            )

    @rule(who=st.integers(0, 2), passengers=st.integers(1, 2))
    def hold_seatless(self, who, passengers):
        with contextlib.suppress(SoldOut, HoldLimitReached):
            hold_seatless(
                customer=self.customers[who],
                sale_id=self.flight.sale_id,
                fare_class="ECONOMY",
                passengers=passengers,
                passenger_names=[f"Passenger {n}" for n in range(passengers)],
            )

    @rule()
    def crowd_holds_the_rest(self):
        """A flash-sale crowd takes every unit left (each within the hold cap), so that the
        class sells out and the waitlist gets its turn."""
        for member in self.crowd:
            inventory = FareInventory.objects.get(pk=self.inventory.pk)
            left = inventory.capacity + inventory.overbook_limit - inventory.sold - inventory.held
            if left > 0:
                with contextlib.suppress(SoldOut, HoldLimitReached):
                    hold_seatless(
                        customer=member,
                        sale_id=self.flight.sale_id,
                        fare_class="ECONOMY",
                        passengers=min(left, 9),
                        passenger_names=[f"Crowd {n}" for n in range(min(left, 9))],
                    )

    @rule(pick=st.integers(0, 50))
    def cancel(self, pick):
        bookings = self._bookings(BookingStatus.HELD, BookingStatus.CONFIRMED)
        if bookings:
            booking = bookings[pick % len(bookings)]
            with contextlib.suppress(CancellationRefused):
                cancel_booking(customer=booking.customer, booking_id=booking.pk)

    @rule(pick=st.integers(0, 50))
    def expire(self, pick):
        """Time moves past one hold's deadline and the sweep runs (waitlist offers follow)."""
        bookings = self._bookings(BookingStatus.HELD)
        if bookings:
            self._lapse(bookings[pick % len(bookings)])
        expire_holds()

    @rule(pick=st.integers(0, 50))
    def pay(self, pick):
        bookings = self._bookings(BookingStatus.HELD)
        if bookings:
            booking = bookings[pick % len(bookings)]
            # No card: a hosted checkout; the webhook brings the outcome.  A waitlist offer
            # arrives without names; another attempt may be under way.
            with contextlib.suppress(PassengerNamesMissing, PaymentInProgress, HoldExpired):
                pay_for_booking(
                    customer=booking.customer,
                    booking_id=booking.pk,
                    idempotency_key=f"pay-{booking.pk}-{pick}",
                )

    @rule(pick=st.integers(0, 50))
    def pay_and_complete_checkout(self, pick):
        """The common path in one step: a customer pays and the gateway's success webhook
        follows at once (without it a confirmation needs pay, then a webhook, before any
        expiry or cancel, and a run may never reach one)."""
        bookings = self._bookings(BookingStatus.HELD)
        if not bookings:
            return
        booking = bookings[pick % len(bookings)]
        with contextlib.suppress(PassengerNamesMissing, PaymentInProgress, HoldExpired):
            pay_for_booking(
                customer=booking.customer,
                booking_id=booking.pk,
                idempotency_key=f"paid-{booking.pk}-{pick}",
            )
        for payment in self._payments(PaymentStatus.PENDING, PaymentStatus.PROCESSING):
            if payment.booking_id == booking.pk:
                self._settle_at_gateway(payment)
                confirm_payment(payment_id=payment.pk)

    @rule(pick=st.integers(0, 50))
    def webhook_success(self, pick):
        payments = self._payments(PaymentStatus.PENDING, PaymentStatus.PROCESSING)
        if payments:
            payment = payments[pick % len(payments)]
            self._settle_at_gateway(payment)
            confirm_payment(payment_id=payment.pk)

    @rule(pick=st.integers(0, 50))
    def webhook_failure(self, pick):
        payments = self._payments(PaymentStatus.PENDING, PaymentStatus.PROCESSING, *PAID)
        if payments:  # a failure after a success must change nothing
            fail_payment(payment_id=payments[pick % len(payments)].pk, reason="card_declined")

    @rule(pick=st.integers(0, 50))
    def webhook_duplicate(self, pick):
        payments = self._payments(*PAID)
        if payments:
            confirm_payment(payment_id=payments[pick % len(payments)].pk)

    @rule(pick=st.integers(0, 50))
    def webhook_late(self, pick):
        """The money arrives after the hold ended: refunded in full, seats not sold."""
        payments = self._payments(PaymentStatus.PENDING, PaymentStatus.PROCESSING)
        if payments:
            payment = payments[pick % len(payments)]
            self._lapse(payment.booking)
            self._settle_at_gateway(payment)
            confirm_payment(payment_id=payment.pk)

    @rule(who=st.integers(0, 2), party=st.integers(1, 2))
    def join_waitlist(self, who, party):
        with contextlib.suppress(NotSoldOut, AlreadyWaiting, HoldLimitReached):
            join_waitlist(
                customer=self.customers[who],
                sale_id=self.flight.sale_id,
                fare_class="ECONOMY",
                party_size=party,
            )

    @rule(who=st.integers(0, 2))
    def sold_out_one_waits_a_crowd_member_gives_up(self, who):
        """The waitlist's common path in one step: the crowd takes what is left, a customer
        joins the waitlist, and a crowd hold is given up (without it an offer needs those
        three steps in that order, with nothing freeing units between them, and a run of
        this size may never reach one)."""
        self.crowd_holds_the_rest()
        self.join_waitlist(who, 1)
        crowd_holds = [b for b in self._bookings(BookingStatus.HELD) if b.customer in self.crowd]
        if crowd_holds:
            with contextlib.suppress(CancellationRefused):
                cancel_booking(customer=crowd_holds[0].customer, booking_id=crowd_holds[0].pk)

    @rule(capacity=st.integers(8, 14), overbook=st.integers(0, 2))
    def staff_changes_limits(self, capacity, overbook):
        with contextlib.suppress(InvalidRequest):  # below what is sold and held
            set_fare_limits(
                inventory_id=self.inventory.pk,
                capacity=capacity,
                overbook_limit=overbook,
                price=Decimal("100.00"),
            )

    @rule(seat=st.sampled_from(SEATS), unblock=st.booleans())
    def seat_block(self, seat, unblock):
        with contextlib.suppress(SeatUnavailable, InvalidRequest, InvalidBookingState):
            (unblock_seat if unblock else block_seat)(sale_id=self.flight.sale_id, seat_no=seat)

    # --- invariants ----------------------------------------------------------------------

    @invariant()
    def counters_match_rows(self):
        assert check_inventory(sale_id=self.flight.sale_id) == []
        inventory = FareInventory.objects.get(pk=self.inventory.pk)
        assert inventory.sold >= 0 and inventory.held >= 0
        assert inventory.sold + inventory.held <= inventory.capacity + inventory.overbook_limit

    @invariant()
    def one_live_booking_per_seat(self):
        doubled = (
            Passenger.objects.filter(
                booking__sale=self.flight.sale,
                booking__status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED],
                seat__isnull=False,
            )
            .values("seat_id")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        assert not doubled.exists()

    @invariant()
    def money_in_is_money_kept_plus_refunds(self):
        for payment in Payment.objects.filter(booking__sale=self.flight.sale).select_related(
            "booking"
        ):
            refunded = Refund.objects.filter(payment=payment).aggregate(s=Sum("amount"))[
                "s"
            ] or Decimal("0")
            if payment.status not in PAID:
                assert refunded == 0, payment
                continue
            kept = payment.amount - refunded
            assert Decimal("0") <= kept <= payment.amount, payment
            if payment.booking.status == BookingStatus.CONFIRMED:
                assert refunded == 0, payment
            if payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED):
                assert refunded == payment.amount, payment  # late: all of it goes back


def test_services_keep_every_invariant_under_random_sequences(settings_for_machine):
    REACHED.clear()
    run_state_machine_as_test(
        SaleMachine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            # Each step is a few transactions on a real database: slow by Hypothesis' measure.
            suppress_health_check=[HealthCheck.too_slow],
            database=None,
            # The default run is one fixed set of sequences: a random one sometimes reached
            # no refund in 25 examples, so the "reached every outcome" check failed by chance.
            # The nightly run keeps exploring new sequences.
            derandomize=not NIGHTLY,
        ),
    )
    never = [outcome for outcome in OUTCOMES if not REACHED[outcome]]
    assert not never, f"never reached: {never} ({dict(REACHED)})"


@pytest.fixture
def settings_for_machine(settings):
    """Refunds run eagerly through the sandbox gateway; no webhooks are sent; the relay is not
    kicked (its consumers are tested elsewhere and only slow the machine down)."""
    from config.celery import app as celery_app

    settings.PAYMENTS = {**django_settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {**django_settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}
    settings.OUTBOX = {**django_settings.OUTBOX, "KICK_ON_COMMIT": False}
    previous = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = True, True
    yield settings
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = previous
