"""Reads of resales (bookings.resale writes them): what a booking page and the API show."""

from __future__ import annotations

from bookings.models import ACTIVE_RESALE_STATUSES, Resale, ResaleStatus


def sold_through(*, booking_id: int) -> Resale | None:
    """The resale that `booking_id` (the buyer's booking) bought, if any."""
    return Resale.objects.filter(buyer_booking_id=booking_id, status=ResaleStatus.SOLD).first()


def active_resale(*, booking_id: int) -> Resale | None:
    """The seller's listing of `booking_id` still open (listed or offered), if any."""
    return Resale.objects.filter(booking_id=booking_id, status__in=ACTIVE_RESALE_STATUSES).first()


def latest_resale(*, booking_id: int) -> Resale | None:
    return Resale.objects.filter(booking_id=booking_id).order_by("-id").first()
