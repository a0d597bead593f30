"""A waitlist offer on an event's seated category: seats freed by a given-up hold are held for
the first waiting party, side by side in one row of one section when they can be."""

import pytest

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, BookingStatus, WaitlistEntry, WaitlistStatus
from bookings.waitlist import join_waitlist
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_freed_seats_of_a_sold_out_category_are_offered_side_by_side():
    event = EventFactory()  # category A: stalls rows 1-2, seats 1-6 (aisle after 3)
    seats = [f"1-{row}-{number}" for row in (1, 2) for number in range(1, 7)]
    holder = UserFactory()
    given_up = hold_seats(
        customer=holder, sale_id=event.sale_id, fare_class="A", seat_numbers=seats[:9]
    )
    hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=seats[9:]
    )
    waiting = UserFactory()
    join_waitlist(customer=waiting, sale_id=event.sale_id, fare_class="A", party_size=2)

    cancel_hold(customer=holder, booking_id=given_up.pk)

    entry = WaitlistEntry.objects.get(customer=waiting)
    assert entry.status == WaitlistStatus.OFFERED
    offer = Booking.objects.get(pk=entry.offer_id)
    assert offer.status == BookingStatus.HELD
    # Every stretch of free seats is three long (the aisle after seat 3), so every pair
    # leaves a single seat: nothing else fits, and the best pair by quality (nearest the
    # stage centre) is offered.
    assert sorted(p.seat.seat_no for p in offer.passengers.select_related("seat")) == [
        "1-1-2",
        "1-1-3",
    ]
