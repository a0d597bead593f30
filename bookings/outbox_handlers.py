"""Bookings' own outbox consumers: tickets and e-mails (waitlist offers among them).  Thin:
event in, service call.  (The websocket of live seat maps is bookings.consumers.)"""

from __future__ import annotations

from decimal import Decimal

from bookings import tickets
from bookings.models import Booking, NotificationKind
from bookings.notifications import queue_notification
from kernel.events import register_consumer
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType


def _booking(event: OutboxEvent) -> Booking:
    return Booking.objects.select_related("customer").get(pk=event.payload["bookingId"])


@register_consumer(OutboxEventType.BOOKING_CONFIRMED, name="tickets.issue")
def issue_tickets(event: OutboxEvent) -> None:
    tickets.ensure_tickets(booking_id=event.payload["bookingId"])


@register_consumer(OutboxEventType.BOOKING_CONFIRMED, name="email.booking_confirmed")
def email_confirmation(event: OutboxEvent) -> None:
    # The e-mail carries the tickets, so it makes sure they exist rather than relying on
    # the order (or the success) of the ticket consumer.  A booking cancelled before this
    # event got here gets no confirmation: the cancellation e-mail follows.  The booking
    # comes back locked, with its customer: no second read of it (issue 26).
    booking = tickets.ensure_tickets(booking_id=event.payload["bookingId"], with_customer=True)
    if booking is not None:
        queue_notification(booking=booking, kind=NotificationKind.BOOKING_CONFIRMED, event=event)


@register_consumer(OutboxEventType.BOOKING_EXPIRED, name="email.booking_expired")
def email_expiry(event: OutboxEvent) -> None:
    queue_notification(booking=_booking(event), kind=NotificationKind.BOOKING_EXPIRED, event=event)


@register_consumer(OutboxEventType.BOOKING_CANCELLED, name="tickets.revoke")
def revoke_tickets(event: OutboxEvent) -> None:
    tickets.revoke_tickets(booking_id=event.payload["bookingId"])


@register_consumer(OutboxEventType.BOOKING_CANCELLED, name="email.booking_cancelled")
def email_cancellation(event: OutboxEvent) -> None:
    booking = _booking(event)
    queue_notification(
        booking=booking,
        kind=NotificationKind.BOOKING_CANCELLED,
        event=event,
        context={"was_confirmed": booking.confirmed_at is not None},
    )


@register_consumer(OutboxEventType.WAITLIST_OFFERED, name="email.waitlist_offer")
def email_waitlist_offer(event: OutboxEvent) -> None:
    booking = Booking.objects.select_related("customer", "sale").get(pk=event.payload["bookingId"])
    queue_notification(booking=booking, kind=NotificationKind.WAITLIST_OFFER, event=event)


@register_consumer(OutboxEventType.REFUND_ISSUED, name="email.refund_issued")
def email_refund(event: OutboxEvent) -> None:
    payload = event.payload
    queue_notification(
        booking=_booking(event),
        kind=NotificationKind.REFUND_ISSUED,
        event=event,
        context={
            "refund_id": payload.get("refundId"),
            "amount": payload.get("amount"),
            "currency": payload.get("currency"),
        },
    )


@register_consumer(OutboxEventType.RESALE_SOLD, name="email.resale_sold")
def email_resale_sold(event: OutboxEvent) -> None:
    payload = event.payload
    queue_notification(
        booking=_booking(event),
        kind=NotificationKind.RESALE_SOLD,
        event=event,
        context={
            "face_value": payload["faceValue"],
            "fee": payload["fee"],
            "refund": str(Decimal(payload["faceValue"]) - Decimal(payload["fee"])),
            "currency": payload["currency"],
            "seats": payload["seats"],
        },
    )
