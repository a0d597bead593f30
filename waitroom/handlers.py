"""Waitlist outbox consumers.  Thin: event in, service call."""

from bookings.models import Booking, NotificationKind
from bookings.notifications import queue_notification
from kernel.events import register_consumer
from kernel.models import OutboxEvent


@register_consumer("waitlist.offered", name="email.waitlist_offer")
def email_offer(event: OutboxEvent) -> None:
    booking = Booking.objects.select_related("customer", "sale").get(pk=event.payload["bookingId"])
    queue_notification(booking=booking, kind=NotificationKind.WAITLIST_OFFER, event=event)
