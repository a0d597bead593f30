"""Resale through the waitlist (issue 29, item 4): offered to the waitlist as a hold; the
seller is refunded (less the fee) and their tickets revoked only when a buyer pays, in the
buyer's confirmation transaction; unsold tickets stay theirs."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.lifecycle import expire_holds
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Resale,
    ResaleStatus,
    Seat,
    SeatStatus,
    Ticket,
    TicketStatus,
    WaitlistEntry,
    WaitlistStatus,
)
from bookings.resale import withdraw_resale
from kernel.models import OutboxEvent
from payments.models import Refund, RefundReason, RefundStatus
from payments.outcomes import confirm_payment
from payments.resale import list_booking_for_resale
from tests.payments.resale_setup import (
    SELLER_SEATS,
    name,
    payment_in_flight,
    sold_out_event_with_paid_booking,
    wait,
)

pytestmark = pytest.mark.django_db(transaction=True)


def counters(event):
    inv = Inventory.objects.get(sale_id=event.sale_id, fare_class="A")
    return inv.sold, inv.held


def test_listing_offers_the_tickets_and_paying_hands_them_over_then_refunds_the_seller():
    r = sold_out_event_with_paid_booking(fee_percent="10")
    buyer, entry = wait(r.event)
    before = counters(r.event)

    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)

    entry.refresh_from_db()
    resale.refresh_from_db()
    assert resale.status == ResaleStatus.OFFERED and resale.fee == Decimal("16.00")
    assert entry.status == WaitlistStatus.OFFERED and entry.offer_id == resale.offer_id
    offer = Booking.objects.get(pk=resale.offer_id)
    assert (offer.status, offer.customer_id, offer.amount) == ("HELD", buyer.pk, Decimal("160.00"))
    # Nothing of the seller's has moved yet: no refund, tickets valid, seats still theirs.
    assert not Refund.objects.exists()
    r.booking.refresh_from_db()
    assert r.booking.status == BookingStatus.CONFIRMED
    assert set(Ticket.objects.filter(booking=r.booking).values_list("status", flat=True)) == {
        TicketStatus.VALID
    }
    assert counters(r.event) == before

    name(offer)
    payment = payment_in_flight(offer)
    confirm_payment(payment_id=payment.pk)

    offer.refresh_from_db()
    r.booking.refresh_from_db()
    assert offer.status == BookingStatus.CONFIRMED
    assert r.booking.status == BookingStatus.CANCELLED
    assert (
        sorted(
            Seat.objects.filter(booking=offer, status=SeatStatus.SOLD).values_list(
                "seat_no", flat=True
            )
        )
        == SELLER_SEATS
    )
    assert sorted(p.seat.seat_no for p in offer.passengers.select_related("seat")) == SELLER_SEATS
    assert set(Ticket.objects.filter(booking=r.booking).values_list("status", flat=True)) == {
        TicketStatus.REVOKED
    }
    refund = Refund.objects.get()
    assert refund.payment.booking_id == r.booking.pk
    assert (refund.amount, refund.reason) == (Decimal("144.00"), RefundReason.RESALE)
    assert refund.status == RefundStatus.SUCCEEDED  # sent through the sandbox after commit
    assert counters(r.event) == before  # the seller's sold units became the buyer's
    assert Resale.objects.get().status == ResaleStatus.SOLD
    types = list(OutboxEvent.objects.order_by("id").values_list("event_type", flat=True))
    for kind in ("resale.listed", "waitlist.offered", "resale.sold", "refund.issued"):
        assert kind in types
    assert types.index("resale.sold") < types.index("refund.issued")


def test_control_without_a_buyer_paying_nobody_is_refunded(monkeypatch):
    """The refund waits for the buyer: the same steps without the payment refund nothing."""
    r = sold_out_event_with_paid_booking()
    wait(r.event)
    list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    assert not Refund.objects.exists()
    assert Booking.objects.get(pk=r.booking.pk).status == BookingStatus.CONFIRMED


def test_an_offer_that_lapses_goes_to_the_next_party_and_the_tickets_stay_the_sellers():
    r = sold_out_event_with_paid_booking()
    _first, first = wait(r.event)
    _second, second = wait(r.event)
    before = counters(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    Booking.objects.filter(pk=resale.offer_id).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    expire_holds()

    first.refresh_from_db()
    second.refresh_from_db()
    resale.refresh_from_db()
    assert first.status == WaitlistStatus.LAPSED
    assert second.status == WaitlistStatus.OFFERED and resale.offer_id == second.offer_id
    assert Booking.objects.get(pk=r.booking.pk).status == BookingStatus.CONFIRMED
    assert counters(r.event) == before  # a lapsed resale offer gives back no units
    assert Seat.objects.filter(booking=r.booking).count() == 2


def test_nobody_of_the_size_waiting_lists_it_for_the_next_who_joins():
    r = sold_out_event_with_paid_booking()
    wait(r.event, party_size=3)  # does not fit a two-ticket booking: keeps waiting
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    assert resale.status == ResaleStatus.LISTED

    _joiner, entry = wait(r.event)

    assert entry.status == WaitlistStatus.OFFERED
    assert Resale.objects.get().offer_id == entry.offer_id


def test_a_party_whose_sections_or_ceiling_exclude_the_seats_is_not_offered_them():
    r = sold_out_event_with_paid_booking()
    wait(r.event, max_seat_price=Decimal("80.00"))  # 80.00 a seat: fits
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    assert resale.status == ResaleStatus.OFFERED
    withdraw_resale(customer=r.seller, booking_id=r.booking.pk)
    WaitlistEntry.objects.update(max_seat_price=Decimal("79.99"))

    again = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)

    assert again.status == ResaleStatus.LISTED


def test_withdrawing_cancels_the_offer_and_the_party_waits_again_in_its_place():
    r = sold_out_event_with_paid_booking()
    _buyer, entry = wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer = Booking.objects.get(pk=resale.offer_id)
    name(offer)
    payment = payment_in_flight(offer)

    withdrawn = withdraw_resale(customer=r.seller, booking_id=r.booking.pk)
    # The buyer's money arrives after the withdrawal: it buys nothing and goes back in full.
    confirm_payment(payment_id=payment.pk)

    entry.refresh_from_db()
    offer.refresh_from_db()
    assert withdrawn.status == ResaleStatus.WITHDRAWN
    assert offer.status == BookingStatus.CANCELLED
    assert entry.status == WaitlistStatus.WAITING and entry.offer_id is None
    assert Booking.objects.get(pk=r.booking.pk).status == BookingStatus.CONFIRMED
    assert set(Ticket.objects.filter(booking=r.booking).values_list("status", flat=True)) == {
        TicketStatus.VALID
    }
    refund = Refund.objects.get()
    assert refund.payment_id == payment.pk and refund.reason == RefundReason.LATE_PAYMENT


@pytest.mark.parametrize(
    ("language", "subject", "refund"),
    [
        ("de", "wurden weiterverkauft", "144,00\u00a0€"),
        ("ru", "перепроданы", "144,00\u00a0€"),
        ("en", "were resold", "€144.00"),
    ],
)
def test_the_seller_is_told_in_their_language(mailoutbox, language, subject, refund):
    from bookings.models import Notification, NotificationKind
    from bookings.notifications import send_notification
    from kernel.outbox import relay_outbox
    from languages.models import LanguagePreference

    r = sold_out_event_with_paid_booking()
    LanguagePreference.objects.create(user=r.seller, language=language)
    wait(r.event)
    resale = list_booking_for_resale(customer=r.seller, booking_id=r.booking.pk)
    offer = Booking.objects.get(pk=resale.offer_id)
    name(offer)
    confirm_payment(payment_id=payment_in_flight(offer).pk)
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    notification = Notification.objects.get(kind=NotificationKind.RESALE_SOLD)
    send_notification(notification_id=notification.pk)  # a no-op if already sent

    sent = [m for m in mailoutbox if m.to == [r.seller.email] and subject in m.subject]
    assert len(sent) == 1, [m.subject for m in mailoutbox]
    assert refund in sent[0].body and refund in sent[0].alternatives[0][0]
