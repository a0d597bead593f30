"""Partial resale under races (issue 29, item 4, "Done when": a refund only after the resale
is paid, under a race with the original owner cancelling), with real threads on their own
connections: one ticket of two is on offer; the buyer pays while the seller cancels.  The
control takes the listing check away and shows the seller refunded twice over."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bookings import resale_selectors
from bookings.audit import check_inventory
from bookings.models import Booking, BookingStatus, Resale, ResaleStatus, Ticket, TicketStatus
from payments import cancellation
from payments.cancellation import cancel_booking
from payments.models import Payment, PaymentStatus, Refund, RefundReason
from payments.resale import list_booking_for_resale
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)
from tests.payments.test_resale_races import paying_while_the_seller_cancels

pytestmark = pytest.mark.django_db(transaction=True)


def one_of_two_offered():
    r = sold_out_event_with_paid_booking(fee_percent="10")
    wait(r.event, party_size=1)
    chosen = Ticket.objects.get(booking=r.booking, seat_no="1-1-2")
    resale = list_booking_for_resale(
        customer=r.seller, booking_id=r.booking.pk, ticket_ids=[chosen.pk]
    )
    offer = Booking.objects.get(pk=resale.offer_id)
    name(offer)
    assert not Refund.objects.exists()  # listed and offered: nobody refunded yet
    return r, offer


def refunds(r) -> list[tuple[str, Decimal]]:
    return sorted(Refund.objects.filter(payment__booking=r.booking).values_list("reason", "amount"))


def tickets(r) -> dict[str, str]:
    return dict(Ticket.objects.filter(booking=r.booking).values_list("seat_no", "status"))


def test_the_buyer_paying_while_the_seller_cancels_refunds_only_the_resold_ticket(monkeypatch):
    r, offer = one_of_two_offered()
    payment = payment_in_flight(offer)
    outcomes = paying_while_the_seller_cancels(monkeypatch, payment, r)

    # The listing was still on offer when the seller asked: refused; the buyer's pay wins.
    assert [type(e).__name__ for e in outcomes.errors] == ["ResaleListed"]
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.SUCCEEDED
    assert Resale.objects.get().status == ResaleStatus.SOLD
    assert refunds(r) == [(RefundReason.RESALE, Decimal("72.00"))]
    assert tickets(r) == {"1-1-1": TicketStatus.VALID, "1-1-2": TicketStatus.REVOKED}
    r.booking.refresh_from_db()
    assert (r.booking.status, r.booking.seat_count) == (BookingStatus.CONFIRMED, 1)
    assert check_inventory(sale_id=r.event.sale_id) == []

    # Cancelling the rest now refunds the rest only: 72 + 80 of 160 paid, the fee kept.
    cancel_booking(customer=r.seller, booking_id=r.booking.pk)
    assert sum(amount for _, amount in refunds(r)) == Decimal("152.00")


def test_control_without_the_listing_check_the_seller_is_refunded_for_all_and_the_buyer_stuck(
    monkeypatch,
):
    """Without `cancel_booking`'s listing check the seller cancels the whole booking, the
    listed ticket included, while it is on offer: refunded by the policy for both tickets,
    and the buyer's money then finds the listed passenger gone and its confirmation fails."""
    r, offer = one_of_two_offered()
    payment = payment_in_flight(offer)
    monkeypatch.setattr(cancellation.resale_selectors, "active_resale", lambda *, booking_id: None)
    assert resale_selectors.active_resale is not None

    outcomes = paying_while_the_seller_cancels(monkeypatch, payment, r)

    assert [type(e).__name__ for e in outcomes.errors] == ["InvalidBookingState"]
    assert refunds(r) == [(RefundReason.CANCELLATION, Decimal("160.00"))]
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.PROCESSING
