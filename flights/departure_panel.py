"""Reads for the admin's departure panel of one flight: every count of the day (booked,
checked in, boarded, standby, no-shows, volunteers, denied), the passengers a denial would
take now, and the compensation ledger."""

from __future__ import annotations

from dataclasses import dataclass, field

from bookings.models import BookingStatus, Passenger, Ticket, TicketStatus
from bookings.seating import standby_queue
from flights.denied_boarding import denial_order, oversold_by, seats_of
from flights.models import (
    Compensation,
    DeniedBoarding,
    DeniedKind,
    Flight,
    NoShow,
    OfferStatus,
    OnlineCheckIn,
    VolunteerOffer,
)


@dataclass
class DeparturePanel:
    flight: Flight
    counts: dict[str, int] = field(default_factory=dict)
    oversold_by: int = 0
    to_deny: list[OnlineCheckIn] = field(default_factory=list)
    denied: list[DeniedBoarding] = field(default_factory=list)
    ledger: list[Compensation] = field(default_factory=list)
    checked_in: list[OnlineCheckIn] = field(default_factory=list)  # with their Art. 11 flags


def departure_panel(*, flight_id: int) -> DeparturePanel:
    flight = Flight.objects.select_related("origin", "destination", "sale").get(pk=flight_id)
    sale_id = flight.sale_id
    classes = list(flight.sale.inventories.values_list("fare_class", flat=True))
    denied = list(
        DeniedBoarding.objects.filter(flight=flight)
        .select_related("passenger", "decided_by", "rebooked_onto")
        .order_by("decided_at", "id")
    )
    counts = {
        "seats": seats_of(flight),
        "booked": Passenger.objects.filter(
            booking__sale_id=sale_id, booking__status=BookingStatus.CONFIRMED, is_live=True
        ).count(),
        "checked_in": OnlineCheckIn.objects.filter(flight=flight).count(),
        "boarded": Ticket.objects.filter(sale_id=sale_id, status=TicketStatus.USED).count(),
        "standby": standby_queue(sale_id=sale_id, fare_classes=classes).count(),
        "no_shows": NoShow.objects.filter(flight=flight).count(),
        "volunteers_asked": VolunteerOffer.objects.filter(flight=flight).count(),
        "volunteers_open": VolunteerOffer.objects.filter(
            flight=flight, status=OfferStatus.OFFERED
        ).count(),
        "volunteers": sum(d.kind == DeniedKind.VOLUNTEER for d in denied),
        "denied": sum(d.kind == DeniedKind.DENIED for d in denied),
    }
    over = oversold_by(flight)
    return DeparturePanel(
        flight=flight,
        counts=counts,
        oversold_by=over,
        to_deny=denial_order(flight)[:over],
        denied=denied,
        ledger=list(
            Compensation.objects.filter(flight=flight)
            .select_related("denied_boarding__passenger")
            .order_by("id")
        ),
        checked_in=list(
            OnlineCheckIn.objects.filter(flight=flight)
            .select_related("passenger")
            .order_by("checked_in_at", "id")
        ),
    )
