"""The engine's paths, each transaction on one sale: what a Citus cluster distributed by sale
runs on one node (kernel/sharding.py).  A trigger on every table records the sale of each row
written (tests/payments/write_log.py): hold (with an Idempotency-Key: its record and outbox
events are the sale's rows), pay and confirm through the sandbox's webhook, cancel with
refund, expiry of two sales' holds in one sweep, and a waitlist offer.  The controls write
two sales in one transaction, and a hold whose outbox event or idempotency record names
another sale, and are caught."""

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
from kernel.idempotency import run_once
from kernel.outbox import emit_event, relay_outbox
from payments.cancellation import cancel_booking
from payments.gateways.sandbox import complete_checkout
from payments.models import Payment, PaymentStatus, Refund
from tests.api.conftest import client_for
from tests.factories import FlightFactory, UserFactory, economy_only_layout, named_hold
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)
from tests.payments.write_log import (
    mixed_transactions,
    recording_writes,
    sales_written_to,
    written_sales,
)

# The kernel's rows each path writes beside the sale's own: each must carry its sale.
SALE_ROWS_OF_THE_KERNEL = (
    "bookings_idempotencyrecord",
    "bookings_outboxevent",
    "bookings_processedevent",
    "bookings_notification",
)

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
        # A hold through the API with an Idempotency-Key (its record is written in the
        # hold's transaction), and its retry (a replay: nothing written).
        keyed = {"flightId": swept_b.pk, "fareClass": "ECONOMY", "seats": ["14A"]}
        api = client_for(customer)
        for _ in range(2):
            answer = api.post("/api/bookings", keyed, format="json", HTTP_IDEMPOTENCY_KEY="k-h")
            assert answer.status_code == 201, answer.content
        assert answer["Idempotent-Replayed"] == "true"
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
        kernel_rows = {table: sales_written_to(table) for table in SALE_ROWS_OF_THE_KERNEL}
        mixed = mixed_transactions()
    assert not mixed, "transactions that would span nodes:\n" + "\n".join(map(str, mixed))
    # The kernel's rows were written, each with its own sale column (no derivation left).
    assert kernel_rows["bookings_idempotencyrecord"] == {swept_b.sale_id}
    assert kernel_rows["bookings_outboxevent"] >= {paid_flight.sale_id, small.sale_id}
    assert kernel_rows["bookings_processedevent"] >= {paid_flight.sale_id}
    assert kernel_rows["bookings_notification"] >= {paid_flight.sale_id}
    assert not any(None in sales for sales in kernel_rows.values()), kernel_rows
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


def test_control_an_outbox_event_or_idempotency_record_of_another_sale_is_caught(customer):
    """The kernel's rows count with their own column: a hold that announced itself (or kept
    its key) under another sale would be a transaction on two nodes, and is named."""
    first, second = FlightFactory(), FlightFactory()
    with recording_writes():
        with transaction.atomic():
            booking = named_hold(customer=customer, flight=first, seats=("12A",))
            emit_event(
                sale_id=second.sale_id,  # wrong on purpose
                aggregate_type="booking",
                aggregate_id=booking.pk,
                event_type="test.wrong_sale",
                payload={},
            )
        run_once(
            sale_id=second.sale_id,  # wrong on purpose: the hold is of `first`
            customer=customer,
            scope="api-hold",
            key="k-wrong",
            request_fingerprint="f",
            write=lambda: named_hold(customer=customer, flight=first, seats=("14A",)),
            answer=lambda b: (201, {"booking_id": b.pk}),
        )
        run_once(  # right: not named
            sale_id=first.sale_id,
            customer=customer,
            scope="api-hold",
            key="k-right",
            request_fingerprint="f",
            write=lambda: named_hold(customer=customer, flight=first, seats=("16A",)),
            answer=lambda b: (201, {"booking_id": b.pk}),
        )
        mixed = mixed_transactions()
    assert len(mixed) == 2, mixed
    assert {m.sales for m in mixed} == {frozenset({first.sale_id, second.sale_id})}
