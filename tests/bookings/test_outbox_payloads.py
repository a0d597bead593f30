"""Every engine outbox type, round-tripped (Zulip's send_event_on_commit tests): the payload
its builder makes is what the real emitter writes, and what a consumer reads back from the
OutboxEvent row after JSON."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bookings import outbox_payloads
from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, Passenger, WaitlistEntry
from bookings.waitlist import join_waitlist
from flights.models import Seat
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType
from tests.bookings.confirming import cancel_confirmed, hold_and_confirm, round_trip
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def emitted(event_type: OutboxEventType, booking: Booking) -> dict:
    return OutboxEvent.objects.get(event_type=event_type, aggregate_id=str(booking.pk)).payload


def test_booking_confirmed(customer, flight):
    booking = hold_and_confirm(customer, flight)
    passengers = [
        {"passengerId": p.pk, "fullName": p.full_name, "seat": p.seat.seat_no}
        for p in Passenger.objects.filter(booking=booking).select_related("seat").order_by("id")
    ]
    built = outbox_payloads.booking_confirmed(booking, seats=["12A", "12B"], passengers=passengers)
    assert emitted(OutboxEventType.BOOKING_CONFIRMED, booking) == built
    assert round_trip(OutboxEventType.BOOKING_CONFIRMED, built) == built


@pytest.mark.parametrize(
    "event_type", [OutboxEventType.BOOKING_CANCELLED, OutboxEventType.SEATS_RELEASED]
)
def test_booking_cancelled_and_its_seats_released(customer, flight, event_type):
    booking = cancel_confirmed(hold_and_confirm(customer, flight))
    built = outbox_payloads.booking_closed(booking, seats=["12B", "12A"])
    assert emitted(event_type, booking) == built
    assert round_trip(event_type, built) == built


def test_booking_expired(customer, flight):
    held = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["30F"]
    )
    expire_holds(now=held.expires_at + timedelta(seconds=1))
    held.refresh_from_db()
    built = outbox_payloads.booking_closed(held, seats=["30F"])
    assert emitted(OutboxEventType.BOOKING_EXPIRED, held) == built
    assert round_trip(OutboxEventType.BOOKING_EXPIRED, built) == built


def test_waitlist_offered():
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    holds = [
        hold_seats(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=[seat_no],
        )
        for seat_no in Seat.objects.filter(sale=flight.sale).values_list("seat_no", flat=True)
    ]
    waiter = UserFactory()
    entry = join_waitlist(
        customer=waiter, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    cancel_hold(customer=holds[0].customer, booking_id=holds[0].pk)
    entry = WaitlistEntry.objects.select_related("offer").get(pk=entry.pk)
    offer = entry.offer
    built = outbox_payloads.waitlist_offered(
        offer,
        customer_id=waiter.pk,
        entry_id=entry.pk,
        party_size=1,
        seats=list(Seat.objects.filter(booking_id=offer.pk).values_list("seat_no", flat=True)),
        expires_at=offer.expires_at,
    )
    assert emitted(OutboxEventType.WAITLIST_OFFERED, offer) == built
    assert round_trip(OutboxEventType.WAITLIST_OFFERED, built) == built
