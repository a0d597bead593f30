"""Denied boarding passes a freed exit-row seat on only to a passenger who confirmed the
exit-row conditions themselves (`Passenger.seat_conditions_confirmed_at`, the one rule
`flights.rules.exit_rows_to_avoid`), not by the check-in row's old flag; with a control."""

import pytest
from django.utils import timezone

from bookings.models import Passenger, Ticket
from flights.denied_boarding import denial_order, deny_boarding
from flights.models import Flight, OnlineCheckIn
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight


def deny_the_seated_one_in_an_exit_row():
    """The flight's one row is its exit row; its seated passenger 1A checked in last, so is
    denied first, and 1A is free for the first seatless passenger checked in."""
    flight, _later, tickets = oversold_flight()
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[1])
    seated_one, seatless_first = tickets[0], tickets[6]
    OnlineCheckIn.objects.filter(passenger_id=seated_one.passenger_id).update(
        checked_in_at=timezone.now()
    )
    return Flight.objects.get(pk=flight.pk), seated_one, seatless_first


def deny(flight):
    expected = [c.passenger_id for c in denial_order(flight)[:2]]
    deny_boarding(
        flight_id=flight.pk, staff=UserFactory(is_staff=True), expected_passenger_ids=expected
    )


@pytest.mark.django_db
def test_a_passenger_who_confirmed_the_conditions_gets_the_freed_exit_row_seat():
    flight, _seated_one, waiting = deny_the_seated_one_in_an_exit_row()
    Passenger.objects.filter(pk=waiting.passenger_id).update(
        seat_conditions_confirmed_at=timezone.now()
    )

    deny(flight)

    assert Passenger.objects.get(pk=waiting.passenger_id).seat.seat_no == "1A"
    assert Ticket.objects.get(pk=waiting.pk).seat_no == "1A"


@pytest.mark.django_db
def test_control_the_check_in_rows_flag_alone_seats_nobody_in_the_exit_row():
    """The old flag said "confirmed" but the passenger's own record does not: the rule reads
    the passenger, so the exit-row seat stays empty rather than go to someone unconfirmed."""
    flight, _seated_one, waiting = deny_the_seated_one_in_an_exit_row()
    OnlineCheckIn.objects.filter(passenger_id=waiting.passenger_id).update(exit_row_confirmed=True)

    deny(flight)

    assert Passenger.objects.get(pk=waiting.passenger_id).seat is None
    assert Ticket.objects.get(pk=waiting.pk).seat_no == ""
