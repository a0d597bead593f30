"""An event's tickets as people see them (the entry ticket) and its entrance: what the engine's
ticket rendering and gate page ask the events catalogue (bookings.catalogue)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Q
from django.utils.translation import gettext as _

from bookings.catalogue import GateEntry, TicketFace
from bookings.models import Seat, Ticket
from events.models import CategoryAssignment, Event, EventStatus, PriceCategory
from events.sale_snapshot import standing_sections
from languages.formatting import format_when_in_zone

# How long after its start an event's entrance may still be letting people in.
GATE_OPEN_AFTER_START = timedelta(hours=12)


def entry_ticket(ticket: Ticket) -> TicketFace:
    """Who, which event, where and when, and the place: section, row and seat, or the
    standing area; and the price category it was sold in."""
    event = ticket.sale.event
    venue = event.venue
    seat = (
        Seat.objects.filter(sale_id=ticket.sale_id, seat_no=ticket.seat_no).first()
        if ticket.seat_no
        else None
    )
    rows = [
        (_("Name"), ticket.passenger_name or _("Name missing: see the box office")),
        (_("Event"), event.name),
        (_("Venue"), f"{venue.name}, {venue.city}"),
        (_("Starts"), format_when_in_zone(event.starts_at, venue.time_zone)),
    ]
    if seat is not None:
        rows += [
            (_("Section"), seat.section),
            (_("Row"), seat.row_label),
            (_("Seat"), str(seat.number)),
        ]
        place = _("%(section)s, row %(row)s, seat %(number)s") % {
            "section": seat.section,
            "row": seat.row_label,
            "number": seat.number,
        }
        category = PriceCategory.objects.filter(event=event, code=ticket.fare_class).first()
    else:
        area = standing_sections(event=event).get(ticket.fare_class)
        area_name = area.name if area else ticket.fare_class
        place = _("Standing — %(area)s") % {"area": area_name}
        rows.append((_("Place"), place))
        rule = (
            CategoryAssignment.objects.filter(category__event=event, section=area)
            .select_related("category")
            .first()
            if area
            else None
        )
        category = rule.category if rule else None
    fare = f"{category.code} — {category.name}" if category else ticket.fare_class
    rows += [
        (_("Category"), fare),
        (_("Booking"), str(ticket.booking_id)),
        (_("Ticket"), ticket.serial),
    ]
    return TicketFace(
        heading=_("Entry ticket"),
        title=f"{_('Entry ticket')} {event.name} {ticket.seat_no}".strip(),
        rows=rows,
        place=place,
        fare=fare,
        file_stem=f"ticket-event-{event.pk}-{ticket.seat_no or ticket.serial}",
        footer=_("Show this code at the entrance. It is valid once."),
        download=_("Download ticket (PDF)"),
        qr_alt=_("QR code of the ticket of %(name)s, %(place)s")
        % {"name": ticket.passenger_name or _("ticket holder"), "place": place},
    )


def _gate_events(*, now: datetime):
    """Events whose entrance may be open at `now`: on sale (with a sale), started at most
    GATE_OPEN_AFTER_START ago."""
    return Event.objects.filter(
        status=EventStatus.ON_SALE,
        sale__isnull=False,
        starts_at__gte=now - GATE_OPEN_AFTER_START,
    ).select_related("venue")


def _entry(event: Event) -> GateEntry:
    venue = event.venue
    return GateEntry(
        ref=event.pk,
        sale_id=event.sale_id,
        label=f"{event.name} · {venue.name}, {venue.city}",
        starts_at=event.starts_at,
        time_zone=venue.time_zone,
    )


def gate_entries(*, query: str, now: datetime, limit: int) -> list[GateEntry]:
    """Soonest first; `query` narrows by the event's name, venue or city."""
    events = _gate_events(now=now)
    query = query.strip()
    if query:
        events = events.filter(
            Q(name__icontains=query)
            | Q(venue__name__icontains=query)
            | Q(venue__city__icontains=query)
        )
    return [_entry(e) for e in events.order_by("starts_at", "name")[:limit]]


def gate_entry(event_id: int, *, now: datetime) -> GateEntry | None:
    event = _gate_events(now=now).filter(pk=event_id).first()
    return _entry(event) if event else None
