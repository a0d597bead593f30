"""Reads for bookings: tickets and who may see them."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.utils import timezone

from bookings.errors import BookingNotFound, TicketNotFound
from bookings.models import Booking, Ticket
from flights.models import Flight, FlightStatus


def _visible_bookings(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Booking]:
    if not user.is_authenticated:
        return Booking.objects.none()
    if user.is_staff:
        return Booking.objects.all()
    return Booking.objects.filter(customer=user)


def tickets_for_booking(
    *, booking_id: int, user: AbstractBaseUser | AnonymousUser | None = None
) -> QuerySet[Ticket]:
    """The booking's tickets (valid, used and revoked), in passenger order.

    With `user`, only the booking's owner and staff see them; anyone else gets
    BookingNotFound, exactly as if the booking did not exist.
    """
    if user is not None and not _visible_bookings(user).filter(pk=booking_id).exists():
        raise BookingNotFound()
    return (
        Ticket.objects.filter(booking_id=booking_id)
        .select_related("flight__origin", "flight__destination")
        .order_by("id")
    )


def access_ticket(
    *, user: AbstractBaseUser | AnonymousUser, booking_id: int, ticket_id: int
) -> Ticket:
    """The ticket if `user` owns its booking or is staff, else TicketNotFound."""
    ticket = (
        Ticket.objects.select_related("booking", "flight__origin", "flight__destination")
        .filter(pk=ticket_id, booking_id=booking_id, booking__in=_visible_bookings(user))
        .first()
    )
    if ticket is None:
        raise TicketNotFound()
    return ticket


def gate_flights(*, now=None) -> QuerySet[Flight]:
    """Flights a gate agent may be boarding: scheduled, departing from 12 hours ago on."""
    now = now or timezone.now()
    return (
        Flight.objects.filter(
            status=FlightStatus.SCHEDULED, departure_at__gte=now - timedelta(hours=12)
        )
        .select_related("origin", "destination")
        .order_by("departure_at")[:200]
    )
