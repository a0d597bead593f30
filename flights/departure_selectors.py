"""Reads for the day of departure: what gate close would do to a flight, shown to staff
before they confirm it (flights/admin_departure.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bookings.models import BookingStatus, Ticket, TicketStatus
from bookings.seating import standby_queue, unboarded_tickets
from flights.models import Flight
from flights.rules import gate_closes_at


@dataclass(frozen=True)
class GateClosePreview:
    flight: Flight
    closes_at: datetime
    boarded: int
    unboarded: int  # the no-shows gate close would record now
    standby: int  # seatless passengers at the gate, waiting for a no-show's seat
    refused: str = ""


def gate_close_preview(*, flight: Flight) -> GateClosePreview:
    refused = ""
    if flight.status == "CANCELLED":
        refused = "The flight is cancelled."
    elif flight.gate_settled_at is not None:
        refused = f"The gate was closed at {flight.gate_closed_at:%Y-%m-%d %H:%M} UTC."
    classes = list(flight.sale.inventories.values_list("fare_class", flat=True))
    return GateClosePreview(
        flight=flight,
        closes_at=gate_closes_at(flight),
        boarded=Ticket.objects.filter(
            sale_id=flight.sale_id,
            status=TicketStatus.USED,
            booking__status=BookingStatus.CONFIRMED,
        ).count(),
        unboarded=unboarded_tickets(sale_id=flight.sale_id).count(),
        standby=standby_queue(sale_id=flight.sale_id, fare_classes=classes).count(),
        refused=refused,
    )
