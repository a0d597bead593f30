"""The engine's paths, each transaction on one sale: what a Citus cluster distributed by sale
runs on one node (kernel/sharding.py).  A trigger on every table records the sale of each row
written (tests/payments/write_log.py): hold, pay and confirm through the sandbox's webhook,
cancel with refund, expiry of two sales' holds in one sweep, and a waitlist offer.  The
control writes two sales in one transaction and is caught."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, WaitlistStatus
from bookings.waitlist import join_waitlist
from flights.models import Seat
from kernel.outbox import relay_outbox
from payments.cancellation import cancel_booking
from payments.gateways.sandbox import complete_checkout
from payments.models import Payment, PaymentStatus, Refund
from tests.factories import FlightFactory, UserFactory, economy_only_layout
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)
from tests.payments.write_log import mixed_transactions, recording_writes, written_sales

pytestmark = pytest.mark.django_db(transaction=True)


def lapse(*bookings: Booking) -> None:
    past = timezone.now() - timedelta(seconds=1)
    for booking in bookings:
        Booking.objects.filter(pk=booking.pk).update(expires_at=past)
        Seat.objects.filter(booking_id=booking.pk).update(held_until=past)


def test_hold_pay_confirm_cancel_expire_and_offer_each_write_one_sale(customer):
    paid_flight, swept_a, swept_b = (FlightFactory() for _ in range(3))
    small = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    with recording_writes():
        # Hold, pay on the hosted checkout, confirm by the gateway's webhook.
        booking = hold(customer, paid_flight)
        assert pay(api_client(customer), booking, key="k-citus").status_code == 202
        payment = Payment.objects.get(booking=booking)
        complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
        assert post_webhook(Client(), *signed(sandbox_event(payment))).status_code == 200
        assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
        # Cancel with refund (the refund is issued by the eager task after commit).
        cancel_booking(customer=customer, booking_id=booking.pk)
        assert Refund.objects.filter(payment=payment).exists()
        # Expiry: two sales' lapsed holds in one sweep.
        lapsed = [hold(UserFactory(), f, seats=("12A",)) for f in (swept_a, swept_b)]
        lapse(*lapsed)
        assert expire_holds() == 2
        # A waitlist offer: a sold-out class, one waiting, a hold lapses and is offered on.
        holders = [
            hold_seats(
                customer=UserFactory(), sale_id=small.sale_id, fare_class="ECONOMY",
                seat_numbers=[seat.seat_no],
            )
            for seat in Seat.objects.filter(sale=small.sale).order_by("row", "letter")
        ]  # fmt: skip
        entry = join_waitlist(
            customer=UserFactory(), sale_id=small.sale_id, fare_class="ECONOMY", party_size=1
        )
        lapse(holders[0])
        assert expire_holds() == 1
        entry.refresh_from_db()
        assert entry.status == WaitlistStatus.OFFERED
        relay_outbox()
        assert written_sales() >= {paid_flight.sale_id, swept_a.sale_id, small.sale_id}
        mixed = mixed_transactions()
    assert not mixed, "transactions that would span nodes:\n" + "\n".join(map(str, mixed))
    assert Booking.objects.get(pk=lapsed[1].pk).status == BookingStatus.EXPIRED


def test_control_a_transaction_that_writes_two_sales_is_caught(customer):
    first, second = FlightFactory(), FlightFactory()
    with recording_writes():
        with transaction.atomic():
            hold(customer, first, seats=("12A",))
            hold(customer, second, seats=("12A",))
        hold(customer, first, seats=("14A",))  # alone in its transaction: not named
        mixed = mixed_transactions()
    assert len(mixed) == 1
    assert mixed[0].sales == {first.sale_id, second.sale_id}
