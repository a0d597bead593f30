"""Test-side building blocks for the day of departure: ticketed passengers with and without
seats, and passengers reporting at the gate, through the same services the site uses."""

from __future__ import annotations

from datetime import datetime

from bookings.customer_holds import hold_seatless
from bookings.models import Booking, Ticket
from bookings.tickets import issue_tickets, scan_ticket
from tests.bookings.confirming import confirm, hold_and_confirm
from tests.factories import FlightFactory, UserFactory, economy_only_layout, passenger_names


def small_flight(*, rows: int = 1, overbook_limit: int = 3, **kwargs):
    """An economy cabin of `rows` x 6 seats (1A-1F for one row) and an overbook margin."""
    return FlightFactory(
        layout=economy_only_layout(rows=rows, overbook_limit=overbook_limit), **kwargs
    )


def seated(flight, *seats: str, customer=None) -> list[Ticket]:
    """A confirmed booking of `seats`, ticketed; its tickets in seat order."""
    booking = hold_and_confirm(
        customer or UserFactory(), flight, seats=seats, names=passenger_names(len(seats))
    )
    issue_tickets(booking_id=booking.pk)
    return list(Ticket.objects.filter(booking=booking).order_by("seat_no"))


def seatless(flight, count: int = 1, *, customer=None, booking_class: str = "") -> list[Ticket]:
    """A confirmed booking of `count` seatless units (the overbooking margin), ticketed."""
    booking = hold_seatless(
        customer=customer or UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        passengers=count,
        passenger_names=passenger_names(count),
        booking_class=booking_class,
    )
    confirm(booking)
    issue_tickets(booking_id=booking.pk)
    return list(Ticket.objects.filter(booking=booking).order_by("id"))


def board(ticket: Ticket, *, staff, flight, now: datetime | None = None):
    """The gate scan: boards a seated passenger, puts a seatless one on standby."""
    return scan_ticket(code=ticket.code, sale_id=flight.sale_id, scanned_by=staff, now=now)


def booking_of(ticket: Ticket) -> Booking:
    return Booking.objects.get(pk=ticket.booking_id)
