"""Cancelling an event refunds everyone, through the real payments (sandbox gateway)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Seat,
    SeatStatus,
    WaitlistEntry,
    WaitlistStatus,
)
from bookings.waitlist import join_waitlist
from events.services import cancel_event
from kernel.models import OutboxEvent
from payments.models import Refund, RefundStatus
from tests.api.conftest import GOOD_CARD, client_for, pay, sandbox_payments  # noqa: F401
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_cancelling_an_event_refunds_every_paid_booking_and_releases_the_rest(
    sandbox_payments,  # noqa: F811
    customer,
    other_customer,
    staff_user,
):
    event = EventFactory()
    paid = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1", "1-1-2"],
        passenger_names=["Ada Lovelace", "Alan Turing"],
    )
    response = pay(
        client_for(customer), paid.pk, amount="160.00", currency="EUR", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 201, response.content
    held = hold_seatless(
        customer=other_customer, sale_id=event.sale_id, fare_class="GA-3", passengers=2
    )
    waiting = join_waitlist(
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="A",
        party_size=1,
        require_sold_out=False,
    )

    result = cancel_event(event_id=event.pk, cancelled_by=staff_user)

    assert result and result.bookings_cancelled == 2 and result.refunds == 1
    assert {b.pk: b.status for b in Booking.objects.filter(sale=event.sale)} == {
        paid.pk: BookingStatus.CANCELLED,
        held.pk: BookingStatus.CANCELLED,
    }
    refund = Refund.objects.get(payment__booking=paid)
    assert refund.amount == Decimal("160.00")  # in full: the organiser called it off
    assert refund.status == RefundStatus.SUCCEEDED and refund.approved_by == staff_user
    assert not Seat.objects.filter(sale=event.sale).exclude(status=SeatStatus.AVAILABLE).exists()
    assert set(Inventory.objects.filter(sale=event.sale).values_list("held", "sold")) == {(0, 0)}
    assert WaitlistEntry.objects.get(pk=waiting.pk).status == WaitlistStatus.CLOSED
    events = set(OutboxEvent.objects.values_list("aggregate_id", "event_type"))
    assert {(str(paid.pk), "booking.cancelled"), (str(paid.pk), "refund.issued")} <= events
    assert (str(held.pk), "booking.cancelled") in events

    again = cancel_event(event_id=event.pk, cancelled_by=staff_user)
    assert not again and again.bookings_cancelled == 0
    assert Refund.objects.count() == 1


def test_a_hold_released_by_the_cancellation_can_no_longer_be_paid(
    sandbox_payments,  # noqa: F811
    customer,
):
    event = EventFactory()
    booking = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="B",
        seat_numbers=["2-A-1"],
        passenger_names=["Grace Hopper"],
    )
    cancel_event(event_id=event.pk)
    response = pay(
        client_for(customer), booking.pk, amount="45.00", currency="EUR", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 409, response.content
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED


def test_staff_cancelling_in_admin_are_recorded_as_approving_the_refunds(
    sandbox_payments,  # noqa: F811
    client,
    customer,
    staff_user,
):
    event = EventFactory()
    paid = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1"],
        passenger_names=["Ada Lovelace"],
    )
    response = pay(
        client_for(customer), paid.pk, amount="80.00", currency="EUR", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 201, response.content
    client.force_login(staff_user)

    client.post(
        "/admin/events/event/",
        {"action": "cancel", "_selected_action": [event.pk], "confirm": "yes"},
        follow=True,
    )

    assert Booking.objects.get(pk=paid.pk).status == BookingStatus.CANCELLED
    refund = Refund.objects.get(payment__booking=paid)
    assert refund.amount == Decimal("80.00") and refund.approved_by == staff_user
