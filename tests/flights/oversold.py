"""Test-side building blocks for denied boarding: an EU flight (FRA-BER, about 470 km, EUR
250) with 6 seats and 8 tickets, all checked in online, and a later flight of the route."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from flights.models import Carrier, Flight, OnlineCheckIn
from tests.factories import AirportFactory
from tests.flights.departing import seated, seatless, small_flight


def eu_airports():
    Carrier.objects.update_or_create(
        code="LH", defaults={"name": "Lufthansa", "is_eu_carrier": True}
    )
    fra = AirportFactory(
        code="FRA", country="DE", latitude=Decimal("50.0333"), longitude=Decimal("8.57056"),
        time_zone="Europe/Berlin",
    )  # fmt: skip
    ber = AirportFactory(
        code="BER", country="DE", latitude=Decimal("52.3667"), longitude=Decimal("13.5033"),
        time_zone="Europe/Berlin",
    )  # fmt: skip
    return fra, ber


def oversold_flight(*, departs_in=timedelta(minutes=30), later_in=timedelta(hours=3)):
    """6 seats, 8 checked-in passengers (6 seated, 2 seatless), past the check-in cut-off;
    and the route's next flight, `later_in` after it, with free seats."""
    fra, ber = eu_airports()
    now = timezone.now()
    flight = small_flight(
        rows=1, overbook_limit=2, origin=fra, destination=ber, departure_at=now + departs_in
    )
    later = small_flight(
        rows=2, origin=fra, destination=ber, departure_at=now + departs_in + later_in
    )
    tickets = [seated(flight, f"1{letter}")[0] for letter in "ABCDEF"] + seatless(flight, 2)
    for minute, ticket in enumerate(tickets):
        OnlineCheckIn.objects.create(
            flight=flight,
            passenger_id=ticket.passenger_id,
            checked_in_at=now - timedelta(hours=5) + timedelta(minutes=minute),
        )
    flight = Flight.objects.get(pk=flight.pk)
    return flight, later, tickets
