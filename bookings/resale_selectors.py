"""Reads of resales (bookings.resale writes them): what a booking page and the API show."""

from __future__ import annotations

from decimal import Decimal

from django.db.models import Sum

from bookings.models import ACTIVE_RESALE_STATUSES, Resale, ResaleStatus, Seat, Ticket


def sold_through(*, booking_id: int) -> Resale | None:
    """The resale that `booking_id` (the buyer's booking) bought, if any."""
    return Resale.objects.filter(buyer_booking_id=booking_id, status=ResaleStatus.SOLD).first()


def active_resale(*, booking_id: int) -> Resale | None:
    """The seller's listing of `booking_id` still open (listed or offered), if any."""
    return Resale.objects.filter(booking_id=booking_id, status__in=ACTIVE_RESALE_STATUSES).first()


def latest_resale(*, booking_id: int) -> Resale | None:
    return Resale.objects.filter(booking_id=booking_id).order_by("-id").first()


def fees_kept(*, booking_id: int) -> Decimal:
    """The resale fees kept from the seller's refunds of `booking_id`'s tickets sold so far:
    money the seller paid that no later cancellation of the rest gives back."""
    return Resale.objects.filter(booking_id=booking_id, status=ResaleStatus.SOLD).aggregate(
        kept=Sum("fee", default=Decimal("0.00"))
    )["kept"]


def listed_tickets(*, resale: Resale) -> list[Ticket]:
    """The tickets `resale` lists (or sold), in the booking's order."""
    return list(Ticket.objects.filter(passenger_id__in=resale.passenger_ids).order_by("id"))


def listed_seats(*, resale: Resale) -> list[str]:
    """The seat numbers of the tickets `resale` lists (none for standing tickets)."""
    return list(
        Seat.objects.filter(passengers__pk__in=resale.passenger_ids)
        .order_by("seat_no")
        .values_list("seat_no", flat=True)
    )
