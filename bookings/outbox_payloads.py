"""The payload of every outbox event type the engine emits: one builder per type, used by the
emitters and by the tests' helpers alike (kernel.outbox_types lists every type).

Engine payloads name the sale by the engine's `saleId` only; partners' webhooks add the
catalogue item's id beside it (`flightId`, `eventId`: partners.services.public_payload).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bookings.models import Booking, BookingStatus, Resale
from kernel.outbox_types import OutboxEventType

# The event announcing a booking's close, by the status it closed to (close_bookings).
CLOSED_EVENT_TYPES = {
    BookingStatus.EXPIRED: OutboxEventType.BOOKING_EXPIRED,
    BookingStatus.CANCELLED: OutboxEventType.BOOKING_CANCELLED,
}


def booking_closed(booking: Booking, *, seats: Iterable[str]) -> dict[str, Any]:
    """`booking.expired`, `booking.cancelled` and the `seats.released` beside them: one
    payload, the seats the close released."""
    return {
        "bookingId": booking.pk,
        "saleId": booking.sale_id,
        "fareClass": booking.fare_class,
        "seatCount": booking.seat_count,
        "seats": sorted(seats),
    }


def booking_confirmed(
    booking: Booking,
    *,
    seats: list[str],
    passengers: list[dict[str, Any]],
    payment: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`booking.confirmed`: who travels where (`passengers`: passengerId, fullName, seat),
    and the payment (paymentId, amount, currency) when one paid for it."""
    return {
        "bookingId": booking.pk,
        "saleId": booking.sale_id,
        "fareClass": booking.fare_class,
        "seatCount": booking.seat_count,
        "seats": seats,
        "passengers": passengers,
        **(payment or {}),
    }


def waitlist_offered(
    booking: Booking,
    *,
    customer_id: int,
    entry_id: int,
    party_size: int,
    seats: Iterable[str],
    expires_at: datetime,
) -> dict[str, Any]:
    """`waitlist.offered`: the hold made for a waitlist entry, until `expires_at`."""
    return {
        "bookingId": booking.pk,
        "saleId": booking.sale_id,
        "fareClass": booking.fare_class,
        "customerId": customer_id,
        "waitlistEntryId": entry_id,
        "partySize": party_size,
        "seats": sorted(seats),
        "expiresAt": expires_at.isoformat(),
    }


def resale_changed(resale: Resale, *, seats: Iterable[str] = ()) -> dict[str, Any]:
    """`resale.listed`, `resale.withdrawn`, `resale.sold`: the seller's booking, and once
    sold the buyer's booking and the seats that passed to it."""
    return {
        "resaleId": resale.pk,
        "bookingId": resale.booking_id,
        "status": resale.status,
        "faceValue": str(resale.face_value),
        "fee": str(resale.fee),
        "currency": resale.currency,
        "buyerBookingId": resale.buyer_booking_id,
        "seats": sorted(seats),
    }


BUILDERS = {
    OutboxEventType.BOOKING_CONFIRMED: booking_confirmed,
    OutboxEventType.BOOKING_EXPIRED: booking_closed,
    OutboxEventType.BOOKING_CANCELLED: booking_closed,
    OutboxEventType.SEATS_RELEASED: booking_closed,
    OutboxEventType.WAITLIST_OFFERED: waitlist_offered,
    OutboxEventType.RESALE_LISTED: resale_changed,
    OutboxEventType.RESALE_WITHDRAWN: resale_changed,
    OutboxEventType.RESALE_SOLD: resale_changed,
}
