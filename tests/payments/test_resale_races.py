"""Resale races with real threads, each with its own connection (issue 29, item 4): the buyer's
payment against the seller withdrawing or cancelling, and two payments for one offer.  Each
guard has a control that shows what happens without it."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from bookings import resale as engine
from bookings import resale_selectors
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Resale, ResaleStatus, Ticket, TicketStatus
from bookings.resale import withdraw_resale
from payments import cancellation
from payments.cancellation import cancel_booking
from payments.models import Payment, PaymentStatus, Refund, RefundReason
from payments.outcomes import confirm_payment
from payments.resale import list_booking_for_resale
from tests.concurrency import run_concurrently
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)

pytestmark = pytest.mark.django_db(transaction=True)


def offered():
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer = Booking.objects.get(pk=resale.offer_id)
    name(offer)
    return r, offer


def buyer_pausing_in_hand_over(monkeypatch):
    """The buyer's confirmation, paused right after it locked the offer booking (inside
    `hand_over`, up to 1 s) so the seller's request runs exactly then."""
    locked, seller_done = threading.Event(), threading.Event()
    real = engine.hand_over

    def paused(offer, *, now):
        locked.set()
        seller_done.wait(timeout=1.0)
        return real(offer, now=now)

    monkeypatch.setattr(engine, "hand_over", paused)
    return locked, seller_done


def seller_after(locked, seller_done, call):
    def run():
        locked.wait(timeout=10)
        try:
            return call()
        finally:
            seller_done.set()

    return run


def paying_while_the_seller_cancels(monkeypatch, payment, r):
    """The buyer's confirmation of `payment` and the seller cancelling `r.booking` while it
    holds the offer (real threads, their own connections)."""
    locked, seller_done = buyer_pausing_in_hand_over(monkeypatch)
    return run_concurrently(
        [
            lambda: confirm_payment(payment_id=payment.pk),
            seller_after(
                locked,
                seller_done,
                lambda: cancel_booking(customer=r.seller, booking_id=r.booking.pk),
            ),
        ]
    )


def seller_refunds(r):
    return list(Refund.objects.filter(payment__booking=r.booking).values_list("reason", flat=True))


# --- the buyer paying while the seller withdraws -----------------------------------------------


def test_a_buyer_paying_and_the_seller_withdrawing_never_both_win(monkeypatch, caplog):
    r, offer = offered()
    payment = payment_in_flight(offer)
    locked, seller_done = buyer_pausing_in_hand_over(monkeypatch)

    outcomes = run_concurrently(
        [
            lambda: confirm_payment(payment_id=payment.pk),
            seller_after(
                locked,
                seller_done,
                lambda: withdraw_resale(customer=r.seller, booking_id=r.booking.pk),
            ),
        ]
    )

    assert "deadlock" not in caplog.text
    # The buyer held the offer: the withdrawal is refused politely, and the sale goes through.
    assert [type(e).__name__ for e in outcomes.errors] == ["ResaleBusy"]
    assert Booking.objects.get(pk=offer.pk).status == BookingStatus.CONFIRMED
    assert Booking.objects.get(pk=r.booking.pk).status == BookingStatus.CANCELLED
    assert Resale.objects.get().status == ResaleStatus.SOLD
    assert seller_refunds(r) == [RefundReason.RESALE]
    assert set(Ticket.objects.filter(booking=r.booking).values_list("status", flat=True)) == {
        TicketStatus.REVOKED
    }


def test_control_a_withdrawal_that_waits_for_the_offer_deadlocks_with_the_buyer(
    monkeypatch, caplog
):
    """Without SKIP LOCKED on the offer, the withdrawal (holding the seller's booking and the
    resale) waits for the buyer, who waits for the resale: PostgreSQL detects the cycle
    after `deadlock_timeout` and kills one of them (retried once by lock_errors_as_too_busy,
    or a 503 when it happens again)."""
    r, offer = offered()
    payment = payment_in_flight(offer)
    locked, seller_done = buyer_pausing_in_hand_over(monkeypatch)

    def lock_offer_waiting(offer_id):
        seller_done.set()  # let the buyer go on: it now needs the resale we hold
        return (
            Booking.objects.select_for_update()
            .filter(pk=offer_id, status=BookingStatus.HELD)
            .first()
        )

    monkeypatch.setattr(engine, "lock_offer", lock_offer_waiting)

    outcomes = run_concurrently(
        [
            lambda: confirm_payment(payment_id=payment.pk),
            seller_after(
                locked,
                seller_done,
                lambda: withdraw_resale(customer=r.seller, booking_id=r.booking.pk),
            ),
        ]
    )

    assert "deadlock detected" in caplog.text
    assert "ResaleBusy" not in outcomes.error_kinds
    assert len(seller_refunds(r)) <= 1  # the other guards still hold: never refunded twice


# --- the buyer paying while the seller cancels the booking ------------------------------------


def test_a_buyer_paying_and_the_seller_cancelling_refunds_the_seller_once(monkeypatch):
    r, offer = offered()
    payment = payment_in_flight(offer)
    outcomes = paying_while_the_seller_cancels(monkeypatch, payment, r)

    assert [type(e).__name__ for e in outcomes.errors] == ["ResaleListed"]
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    assert seller_refunds(r) == [RefundReason.RESALE]


def test_control_without_the_listing_check_the_seller_is_refunded_and_the_buyer_stuck(
    monkeypatch,
):
    """Without `cancel_booking`'s listing check the seller cancels while the tickets are on
    offer: they are refunded by the cancellation policy, the buyer's money then finds no
    tickets to buy and its confirmation fails."""
    r, offer = offered()
    payment = payment_in_flight(offer)
    monkeypatch.setattr(cancellation.resale_selectors, "active_resale", lambda *, booking_id: None)
    assert resale_selectors.active_resale is not None

    outcomes = paying_while_the_seller_cancels(monkeypatch, payment, r)

    assert RefundReason.CANCELLATION in seller_refunds(r)
    assert [type(e).__name__ for e in outcomes.errors] == ["InvalidBookingState"]
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.PROCESSING


# --- two buyers: the one whose offer lapsed, and the one it passed to -------------------------


def test_a_late_buyer_and_the_next_buyer_paying_at_once_sell_once():
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    late = Booking.objects.get(pk=resale.offer_id)
    name(late)
    late_payment = payment_in_flight(late)
    Booking.objects.filter(pk=late.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expire_holds()  # the offer passes to the next party
    resale.refresh_from_db()
    next_offer = Booking.objects.get(pk=resale.offer_id)
    name(next_offer)
    next_payment = payment_in_flight(next_offer)

    outcomes = run_concurrently(
        [
            lambda: confirm_payment(payment_id=late_payment.pk),
            lambda: confirm_payment(payment_id=next_payment.pk),
        ]
    )

    assert not outcomes.errors, outcomes.errors
    assert Payment.objects.get(pk=late_payment.pk).status == PaymentStatus.REFUND_REQUIRED
    assert Payment.objects.get(pk=next_payment.pk).status == PaymentStatus.SUCCEEDED
    assert seller_refunds(r) == [RefundReason.RESALE]
    assert Resale.objects.get().buyer_booking_id == next_offer.pk
