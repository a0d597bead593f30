"""Template helpers that ask the catalogue how to name what the engine sells."""

from zoneinfo import ZoneInfo

from django import template
from django.utils.translation import gettext

from bookings import catalogue
from bookings.catalogue import TicketFace
from bookings.models import Booking, Sale, Seat, Ticket
from bookings.tickets import is_void

register = template.Library()


@register.filter
def class_label(code: str) -> str:
    """`{{ booking.fare_class|class_label }}`: "Economy" for a flight's ECONOMY."""
    return catalogue.class_label(code)


@register.filter
def ticket_face(ticket: Ticket) -> TicketFace:
    """`{% with face=ticket|ticket_face %}`: what the ticket says, in its catalogue's words."""
    return catalogue.ticket_face(ticket)


@register.filter
def sold_by_count(booking: Booking) -> bool:
    """`{% if booking|sold_by_count %}`: its class is sold without seats (a standing area;
    a flight cabin's overbooking margin), as its catalogue says."""
    return catalogue.sells_seatless(booking.sale, booking.fare_class)


@register.filter
def ticket_void(ticket: Ticket) -> bool:
    """`{% if ticket|ticket_void %}`: revoked, or its booking closed (bookings.tickets)."""
    return is_void(ticket)


@register.simple_tag
def sale_summary(sale: Sale) -> dict:
    """`{% sale_summary booking.sale as summary %}`: the catalogue's words for the sale (title,
    place) and its start in local time (with `zone`), for pages of any catalogue."""
    found = catalogue.describe(sale)
    return {
        "title": found.title,
        "place": found.place,
        "starts_local": found.starts_at.astimezone(ZoneInfo(found.time_zone)),
        "zone": found.time_zone,
    }


@register.filter
def booking_class(booking: Booking) -> str:
    """`{{ booking|booking_class }}`: its inventory class as the catalogue names it
    ("Economy", "Category A — Front stalls", "Standing — Floor")."""
    return catalogue.describe_class(booking.sale, booking.fare_class)


def seat_words(*, section: str, row: str, number: int) -> str:
    """A venue seat as people say it: "Stalls, row 3, seat 7"."""
    return gettext("%(section)s, row %(row)s, seat %(number)s") % {
        "section": section,
        "row": row,
        "number": number,
    }


@register.filter
def seat_label(seat: Seat | None) -> str:
    """`{{ passenger.seat|seat_label }}`: "12A" for a cabin seat, "Stalls, row 3, seat 7"
    for a venue seat; "" without a seat."""
    if seat is None:
        return ""
    if seat.number is None:
        return seat.seat_no
    return seat_words(section=seat.section, row=seat.row_label, number=seat.number)
