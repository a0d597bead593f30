"""Issue 28: the original booking of passengers denied boarding is closed with a reason, and its
units stay sold (cancelling it would hand them back to the oversold flight)."""

import pytest

from bookings.errors import InvalidBookingState
from bookings.models import Booking, BookingStatus, Inventory
from flights.denied_boarding import denial_order, deny_boarding
from flights.models import DeniedBoarding, OnlineCheckIn
from flights.services import check_inventory
from payments.cancellation import cancel_booking
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight


def sold_of(flight) -> int:
    return Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY").sold


@pytest.mark.django_db
def test_a_booking_whose_passengers_are_all_denied_is_closed_and_keeps_its_units():
    flight, _later, tickets = oversold_flight()
    party = Booking.objects.get(pk=tickets[-1].booking_id)  # the two seatless, checked in last
    assert party.seat_count == 2
    sold_before = sold_of(flight)
    expected = [c.passenger_id for c in denial_order(flight)[:2]]

    deny_boarding(
        flight_id=flight.pk, staff=UserFactory(is_staff=True), expected_passenger_ids=expected
    )

    party.refresh_from_db()
    assert party.status == BookingStatus.CONFIRMED and party.closed_at is not None
    assert party.is_closed_unflown
    reasons = set(DeniedBoarding.objects.filter(booking=party).values_list("reason", flat=True))
    day = f"{flight.departure_at:%Y-%m-%d}"
    assert reasons == {f"Denied boarding against their will (Art. 4(3)) on {flight.code} {day}"}
    assert sold_of(flight) == sold_before  # no unit back to the oversold flight
    assert check_inventory(sale_id=flight.sale_id) == []
    with pytest.raises(InvalidBookingState):  # nor by cancelling it afterwards
        cancel_booking(customer=party.customer, booking_id=party.pk)
    assert sold_of(flight) == sold_before


@pytest.mark.django_db
def test_control_a_booking_with_a_passenger_still_flying_stays_open_and_cancellable():
    flight, _later, tickets = oversold_flight()
    OnlineCheckIn.objects.filter(passenger_id=tickets[-1].passenger_id).update(
        reduced_mobility=True
    )  # Art. 11: the party's second passenger flies
    party = Booking.objects.get(pk=tickets[-1].booking_id)
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    assert tickets[-2].passenger_id in expected

    deny_boarding(
        flight_id=flight.pk, staff=UserFactory(is_staff=True), expected_passenger_ids=expected
    )

    party.refresh_from_db()
    assert party.closed_at is None and not party.is_closed_unflown
    party.check_cancellable(statuses=(BookingStatus.CONFIRMED,), refused="%(status)s")
