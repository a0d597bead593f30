"""The day of departure's e-mails, from its outbox events (flights.denied_boarding): thin,
event in, notification queued (in the customer's language: bookings.notifications); and a
denial's rerouting, queued as a task of its own (flights.rerouting)."""

from __future__ import annotations

from functools import partial

from django.db import transaction

from bookings.models import Booking, NotificationKind
from bookings.notifications import queue_notification
from flights import outbox_payloads
from flights.eu261 import Remedy
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
    if event.payload["remedy"] == Remedy.REROUTING:
        return  # e-mailed once the new booking exists (flights.rerouting, step 3)
    queue_notification(
        booking=_booking(event),
        kind=NotificationKind.BOARDING_DENIED,
        event=event,
        context=outbox_payloads.boarding_denied_email(event.payload),
    )


@register_consumer(OutboxEventType.BOARDING_DENIED, name="flights.reroute")
def reroute_denied_passenger(event: OutboxEvent) -> None:
    """The rerouting is booked on the later flight's sale, never in this receipt's
    transaction (the event's sale): the task runs after it commits (flights.rerouting)."""
    if event.payload["remedy"] != Remedy.REROUTING:
        return
    transaction.on_commit(
        partial(
            queue_rerouting, flight_id=event.sale_id, denied_id=event.payload["deniedBoardingId"]
        ),
        robust=True,
    )


def queue_rerouting(*, flight_id: int, denied_id: int) -> None:
    from flights.tasks import reroute_denied_passenger_task

    reroute_denied_passenger_task.delay(flight_id, denied_id)
