"""The day of departure's e-mails, from its outbox events (flights.denied_boarding): thin,
event in, notification queued (in the customer's language: bookings.notifications)."""

from __future__ import annotations

from bookings.models import Booking, NotificationKind
from bookings.notifications import queue_notification
from kernel.events import register_consumer
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType


def _booking(event: OutboxEvent) -> Booking:
    return Booking.objects.select_related("customer", "sale").get(pk=event.payload["bookingId"])


@register_consumer(OutboxEventType.VOLUNTEERS_ASKED, name="email.volunteer_offer")
def email_volunteer_offer(event: OutboxEvent) -> None:
    queue_notification(
        booking=_booking(event),
        kind=NotificationKind.VOLUNTEER_OFFER,
        event=event,
        context={"amount": event.payload["amount"], "currency": event.payload["currency"]},
    )


@register_consumer(OutboxEventType.BOARDING_DENIED, name="email.boarding_denied")
def email_boarding_denied(event: OutboxEvent) -> None:
    p = event.payload
    queue_notification(
        booking=_booking(event),
        kind=NotificationKind.BOARDING_DENIED,
        event=event,
        context={
            "kind": p["kind"],
            "remedy": p["remedy"],
            "rebooked_booking_id": p["rebookedBookingId"],
            "compensation": p["compensation"],
            "currency": p["currency"],
            "payout_method": p["payoutMethod"],
        },
    )
