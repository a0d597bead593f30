"""Partial resale (issue 29, item 4): the seller chooses which tickets to resell.  Only those
are offered (to a party of their number), and when the buyer pays exactly those are revoked,
their seats and units are the buyer's and the seller is refunded their price less the fee, in
the buyer's confirmation transaction; the rest of the booking stays the seller's."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from bookings import resale_selectors
from bookings.audit import check_inventory
from bookings.errors import NotForResale, NotYourTickets
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Resale,
    ResaleStatus,
    Seat,
    Ticket,
    TicketStatus,
    WaitlistStatus,
)
from payments.cancellation import cancel_booking
from payments.models import Payment, Refund, RefundReason, RefundStatus
from payments.outcomes import confirm_payment
from payments.resale import list_booking_for_resale
from tests.payments.resale_setup import (
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)

pytestmark = pytest.mark.django_db(transaction=True)


def ticket_on(booking, seat_no: str) -> Ticket:
    return Ticket.objects.get(booking=booking, seat_no=seat_no)


def list_one(r, seat_no: str = "1-1-2") -> Resale:
    return list_booking_for_resale(
        customer=r.seller, booking_id=r.booking.pk, ticket_ids=[ticket_on(r.booking, seat_no).pk]
    )


def statuses(booking) -> dict[str, str]:
    return dict(Ticket.objects.filter(booking=booking).values_list("seat_no", "status"))


def sell(offer: Booking) -> Payment:
    name(offer)
    payment = payment_in_flight(offer)
    confirm_payment(payment_id=payment.pk)
    return payment


def test_one_ticket_of_two_is_offered_to_a_party_of_one_and_sold_alone():
    r = sold_out_event_with_paid_booking(fee_percent="10")
    _pair, pair_entry = wait(r.event, party_size=2)  # first in line, but two
    single, single_entry = wait(r.event, party_size=1)
    sold_before = Inventory.objects.get(sale_id=r.event.sale_id, fare_class="A").sold

    resale = list_one(r)

    resale.refresh_from_db()
    assert (resale.face_value, resale.fee) == (Decimal("80.00"), Decimal("8.00"))
    pair_entry.refresh_from_db()
    single_entry.refresh_from_db()
    assert pair_entry.status == WaitlistStatus.WAITING  # keeps its place
    assert single_entry.status == WaitlistStatus.OFFERED
    offer = Booking.objects.get(pk=resale.offer_id)
    assert (offer.customer_id, offer.seat_count, offer.amount) == (single.pk, 1, Decimal("80.00"))
    assert not Refund.objects.exists()  # nothing before the buyer pays

    sell(offer)

    r.booking.refresh_from_db()
    assert (r.booking.status, r.booking.seat_count, r.booking.amount) == (
        BookingStatus.CONFIRMED,
        1,
        Decimal("80.00"),
    )
    assert statuses(r.booking) == {"1-1-1": TicketStatus.VALID, "1-1-2": TicketStatus.REVOKED}
    assert list(Seat.objects.filter(booking=r.booking).values_list("seat_no", flat=True)) == [
        "1-1-1"
    ]
    assert list(Seat.objects.filter(booking=offer).values_list("seat_no", flat=True)) == ["1-1-2"]
    refund = Refund.objects.get(payment__booking=r.booking)
    assert (refund.reason, refund.amount) == (RefundReason.RESALE, Decimal("72.00"))
    assert Resale.objects.get().status == ResaleStatus.SOLD
    # The units moved from one booking to the other: `sold` is unchanged and adds up.
    assert Inventory.objects.get(sale_id=r.event.sale_id, fare_class="A").sold == sold_before
    assert check_inventory(sale_id=r.event.sale_id) == []


def test_the_rest_can_be_resold_later_and_then_the_booking_closes():
    r = sold_out_event_with_paid_booking(fee_percent="10")
    wait(r.event, party_size=1)
    wait(r.event, party_size=1)
    sell(Booking.objects.get(pk=list_one(r, "1-1-2").offer_id))

    sell(Booking.objects.get(pk=list_one(r, "1-1-1").offer_id))

    r.booking.refresh_from_db()
    assert r.booking.status == BookingStatus.CANCELLED
    assert set(statuses(r.booking).values()) == {TicketStatus.REVOKED}
    amounts = Refund.objects.filter(payment__booking=r.booking).values_list("amount", flat=True)
    assert sorted(amounts) == [Decimal("72.00"), Decimal("72.00")]
    assert check_inventory(sale_id=r.event.sale_id) == []


def test_cancelling_the_rest_after_a_partial_sale_keeps_the_fee():
    r = sold_out_event_with_paid_booking(fee_percent="10")
    wait(r.event, party_size=1)
    sell(Booking.objects.get(pk=list_one(r).offer_id))

    done = cancel_booking(customer=r.seller, booking_id=r.booking.pk)

    # Paid 160: 72 back for the resold ticket (its fee 8 kept), the rest's 80 by the policy.
    assert (done.quote.paid, done.quote.amount) == (Decimal("80.00"), Decimal("80.00"))
    assert refunded_to(r) == Decimal("152.00")


def refunded_to(r) -> Decimal:
    return sum(
        Refund.objects.filter(payment__booking=r.booking)
        .exclude(status=RefundStatus.FAILED)
        .values_list("amount", flat=True),
        Decimal(0),
    )


def test_control_without_counting_the_kept_fee_cancelling_the_rest_returns_it(monkeypatch):
    r = sold_out_event_with_paid_booking(fee_percent="10")
    wait(r.event, party_size=1)
    sell(Booking.objects.get(pk=list_one(r).offer_id))
    monkeypatch.setattr(resale_selectors, "fees_kept", lambda *, booking_id: Decimal("0.00"))

    done = cancel_booking(customer=r.seller, booking_id=r.booking.pk)

    assert done.quote.paid == Decimal("88.00")  # the rest's 80 and the resale's fee of 8
    assert done.quote.amount == Decimal("88.00") and refunded_to(r) == Decimal("160.00")


@pytest.mark.parametrize("choice", [[], "another booking's"], ids=["none", "not-theirs"])
def test_a_choice_of_no_tickets_or_someone_elses_is_refused_and_changes_nothing(choice):
    r = sold_out_event_with_paid_booking()
    other = sold_out_event_with_paid_booking()
    ticket_ids = [] if choice == [] else [ticket_on(other.booking, "1-1-1").pk]

    with pytest.raises(NotYourTickets):
        list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk, ticket_ids=ticket_ids)

    assert not Resale.objects.exists()


def test_a_used_ticket_cannot_be_resold_but_its_neighbour_can():
    r = sold_out_event_with_paid_booking()
    Ticket.objects.filter(pk=ticket_on(r.booking, "1-1-1").pk).update(
        status=TicketStatus.USED, used_at=timezone.now()
    )

    with pytest.raises(NotForResale):
        list_one(r, "1-1-1")
    with pytest.raises(NotForResale):  # the whole booking, used ticket and all
        list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    assert list_one(r, "1-1-2").status in (ResaleStatus.LISTED, ResaleStatus.OFFERED)
