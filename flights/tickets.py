"""A flight's tickets as people see them (the boarding pass) and its gate: what the engine's
ticket rendering and gate page ask the flights catalogue (bookings.catalogue)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils.translation import gettext as _

from bookings import catalogue
from bookings.catalogue import GateEntry, TicketFace
from bookings.models import Ticket
from flights.models import Flight
from flights.selectors import gate_flights, is_gate_flight
from languages.formatting import format_when_in_zone


def boarding_minutes() -> int:
    return int(getattr(settings, "BOARDING_MINUTES_BEFORE_DEPARTURE", 30))


def boarding_pass(ticket: Ticket) -> TicketFace:
    """What the pass says, label by label; every time local at its airport, with its zone."""
    flight = ticket.sale.flight
    origin, destination = flight.origin, flight.destination
    boarding = flight.departure_at - timedelta(minutes=boarding_minutes())
    rows = [
        (_("Passenger"), ticket.passenger_name or _("Name missing: see the check-in desk")),
        (_("Flight"), flight.code),
        (_("From"), f"{origin.code} {origin.local_city}"),
        (_("To"), f"{destination.code} {destination.local_city}"),
        (_("Departure"), format_when_in_zone(flight.departure_at, origin.time_zone)),
        (_("Arrival"), format_when_in_zone(flight.arrival_at, destination.time_zone)),
        (_("Boarding"), format_when_in_zone(boarding, origin.time_zone)),
        (_("Gate"), flight.gate or _("see screens")),
        (_("Seat"), ticket.seat_no or _("assigned at the gate")),
        (_("Fare class"), str(catalogue.class_label(ticket.fare_class))),
        (_("Booking"), str(ticket.booking_id)),
        (_("Ticket"), ticket.serial),
    ]
    return TicketFace(
        heading=_("E-ticket / Boarding pass"),
        # A separate gettext call (not inside an f-string), so makemessages finds the words.
        title=" ".join(filter(None, [_("Boarding pass"), flight.code, ticket.seat_no])),
        rows=rows,
        place=(
            _("seat %(seat)s") % {"seat": ticket.seat_no}
            if ticket.seat_no
            else _("seat assigned at the gate")
        ),
        fare=str(catalogue.class_label(ticket.fare_class)),
        file_stem=f"boarding-pass-{flight.code}-{ticket.seat_no or ticket.serial}",
        footer=_("Show this code at the gate. It is valid once."),
        download=_("Download boarding pass (PDF)"),
        qr_alt=_("QR code of the ticket of %(name)s, seat %(seat)s")
        % {
            "name": ticket.passenger_name or _("passenger"),
            "seat": ticket.seat_no or _("to be assigned"),
        },
    )


def _entry(flight: Flight) -> GateEntry:
    return GateEntry(
        ref=flight.pk,
        sale_id=flight.sale_id,
        label=f"{flight.code} {flight.origin_id}→{flight.destination_id}",
        starts_at=flight.departure_at,
        time_zone=flight.origin.time_zone,
    )


def gate_entries(*, query: str, now: datetime, limit: int) -> list[GateEntry]:
    return [_entry(f) for f in gate_flights(now=now, query=query, limit=limit)]


def gate_entry(flight_id: int, *, now: datetime) -> GateEntry | None:
    if not is_gate_flight(flight_id=flight_id, now=now):
        return None
    return _entry(Flight.objects.select_related("origin").get(pk=flight_id))
