"""flights 0015 carries the exit-row confirmations online check-in stored before bookings 0022
(`OnlineCheckIn.exit_row_confirmed`) onto the passenger, forward and back with live rows;
after it the gate boards such a passenger without asking again (with a control: a passenger
whose check-in confirmed nothing is still asked)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.models import Passenger
from bookings.tickets import ScanOutcome, scan_ticket
from flights.models import Flight, OnlineCheckIn
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import UserFactory
from tests.flights.departing import seated, small_flight

BEFORE = [("flights", "0014_day_of_departure_keys_by_sale")]


def confirmed_at(ticket):
    return Passenger.objects.get(pk=ticket.passenger_id).seat_conditions_confirmed_at


def checked_in(ticket, *, at, exit_row_confirmed):
    OnlineCheckIn.objects.create(
        flight_id=ticket.sale_id,
        passenger_id=ticket.passenger_id,
        checked_in_at=at,
        exit_row_confirmed=exit_row_confirmed,
    )


@pytest.mark.django_db(transaction=True)
def test_check_in_confirmations_are_carried_onto_passengers_forward_and_back():
    flight = small_flight(departure_at=timezone.now() + timedelta(hours=3))
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[1])
    old, unconfirmed, at_hold, both = seated(flight, "1A", "1B", "1C", "1D")
    early = timezone.now() - timedelta(hours=2)
    later = timezone.now() - timedelta(minutes=5)
    # As bookings 0022 left them: the check-in's flag, and the passenger's column empty...
    checked_in(old, at=early, exit_row_confirmed=True)
    checked_in(unconfirmed, at=early, exit_row_confirmed=False)
    # ...and as written since: confirmed at the hold (no flag), or both, at its own time.
    checked_in(at_hold, at=early, exit_row_confirmed=False)
    checked_in(both, at=early, exit_row_confirmed=True)
    Passenger.objects.filter(pk__in=[at_hold.passenger_id, both.passenger_id]).update(
        seat_conditions_confirmed_at=later
    )
    try:
        apps = migrate(BEFORE)
        flags = dict(
            apps.get_model("flights", "OnlineCheckIn").objects.values_list(
                "passenger_id", "exit_row_confirmed"
            )
        )
        # Back: every passenger's confirmation is on the check-in row the old code reads.
        assert [flags[t.passenger_id] for t in (old, unconfirmed, at_hold, both)] == [
            True, False, True, True,
        ]  # fmt: skip
        assert confirmed_at(old) is None, "nothing carried yet"

        migrate(latest())

        # Forward: the old flag's confirmation is the passenger's, at its check-in time;
        # a passenger's own later confirmation stands; no confirmation is invented.
        assert confirmed_at(old) == early
        assert confirmed_at(unconfirmed) is None
        assert (confirmed_at(at_hold), confirmed_at(both)) == (later, later)
    finally:
        migrate(latest())

    staff = UserFactory(is_staff=True)
    boarded = scan_ticket(code=old.code, sale_id=flight.sale_id, scanned_by=staff)
    asked = scan_ticket(code=unconfirmed.code, sale_id=flight.sale_id, scanned_by=staff)
    assert boarded.outcome == ScanOutcome.VALID
    assert asked.outcome == ScanOutcome.CONDITIONS_UNCONFIRMED, "control: nothing to carry"
