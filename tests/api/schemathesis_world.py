"""Real things for generated API requests to find (tests/api/test_schema*.py)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework.authtoken.models import Token

from bookings.customer_holds import hold_seats
from kernel.outbox import relay_outbox
from tests.bookings.confirming import confirm, hold_and_confirm
from tests.events.factories import EventFactory
from tests.factories import FlightFactory
from waitroom.models import WaitingRoom
from waitroom.staff import open_waiting_room


def build_world(customer) -> dict:
    """Real things for generated requests to find, so most paths resolve: a flight with a
    held booking of ours and a confirmed one with tickets, an event on sale with a confirmed
    booking of ours and its tickets, a protected sale (waiting room) and a draft event."""
    flight = FlightFactory()
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    flown = hold_and_confirm(customer, flight, seats=["14A"], names=["Ana Lima"])
    event = EventFactory()
    seen = confirm(
        hold_seats(
            customer=customer,
            sale_id=event.sale_id,
            fare_class="A",
            seat_numbers=["1-1-1"],
            passenger_names=["Ada Lovelace"],
        )
    )
    queued = FlightFactory()
    open_waiting_room(
        sale_id=queued.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=10,
        max_inside=10,
    )
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    pairs = [
        (booking.pk, booking.tickets.values_list("pk", flat=True).first())
        for booking in (flown, seen)
    ]
    return {
        "token": Token.objects.get_or_create(user=customer)[0].key,
        "flightId": [flight.pk, queued.pk],
        "eventId": [event.pk, EventFactory(publish=False).pk],
        "roomId": list(WaitingRoom.objects.values_list("pk", flat=True)),
        "booking_ticket": pairs,
    }
