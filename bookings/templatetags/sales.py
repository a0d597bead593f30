"""Template helpers that ask the catalogue how to name what the engine sells."""

from django import template

from bookings import catalogue
from bookings.catalogue import TicketFace
from bookings.models import Ticket

register = template.Library()


@register.filter
def class_label(code: str) -> str:
    """`{{ booking.fare_class|class_label }}`: "Economy" for a flight's ECONOMY."""
    return catalogue.class_label(code)


@register.filter
def ticket_face(ticket: Ticket) -> TicketFace:
    """`{% with face=ticket|ticket_face %}`: what the ticket says, in its catalogue's words."""
    return catalogue.ticket_face(ticket)
