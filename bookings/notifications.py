"""E-mail notifications: decided inside a transaction (a Notification row), sent after it.

Sending claims the row PENDING -> SENDING with a conditional update, so two workers never
send the same row; a worker that dies mid-send leaves it SENDING, and the stale sweep puts it
back to PENDING: at the SMTP boundary delivery is at least once, everywhere else exactly once.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from bookings.models import (
    Booking,
    Notification,
    NotificationKind,
    NotificationStatus,
    OutboxEvent,
)
from bookings.ticket_render import ticket_pdf

logger = logging.getLogger(__name__)

SUBJECTS = {
    NotificationKind.BOOKING_CONFIRMED: "Your tickets for flight {flight}",
    NotificationKind.BOOKING_EXPIRED: "Your hold on flight {flight} has expired",
    NotificationKind.BOOKING_CANCELLED: "Your booking for flight {flight} is cancelled",
    NotificationKind.REFUND_ISSUED: "Refund for your booking on flight {flight}",
    NotificationKind.WAITLIST_OFFER: "Seats are held for you on flight {flight}",
}


def queue_notification(
    *,
    booking: Booking,
    kind: NotificationKind,
    event: OutboxEvent | None = None,
    context: dict[str, Any] | None = None,
) -> Notification | None:
    """Record an e-mail to the booking's customer and send it once the transaction commits."""
    to = booking.customer.email
    if not to:
        logger.info("no e-mail address for booking %s; %s not sent", booking.pk, kind)
        return None
    now = timezone.now()
    with transaction.atomic():
        notification = Notification.objects.create(
            booking=booking,
            event=event,
            kind=kind,
            to=to,
            context=context or {},
            status=NotificationStatus.PENDING,
            created_at=now,
            updated_at=now,
        )
        transaction.on_commit(partial(dispatch_notification, notification.pk), robust=True)
    return notification


def dispatch_notification(notification_id: int) -> None:
    from bookings.tasks import send_notification

    send_notification.apply_async((notification_id,), retry=False)


def send_notification(*, notification_id: int) -> bool:
    """Send one pending notification; False if it was not pending (sent, or being sent)."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Notification.objects.filter(
            pk=notification_id, status=NotificationStatus.PENDING
        ).update(status=NotificationStatus.SENDING, attempts=F("attempts") + 1, updated_at=now)
    if not claimed:
        return False
    notification = Notification.objects.select_related(
        "booking__flight__origin", "booking__flight__destination", "booking__customer"
    ).get(pk=notification_id)
    try:
        build_message(notification).send()
    except Exception as exc:
        gave_up = notification.attempts >= settings.NOTIFICATIONS["MAX_ATTEMPTS"]
        Notification.objects.filter(pk=notification_id, status=NotificationStatus.SENDING).update(
            status=NotificationStatus.FAILED if gave_up else NotificationStatus.PENDING,
            last_error=repr(exc)[:2000],
            updated_at=timezone.now(),
        )
        raise
    Notification.objects.filter(pk=notification_id, status=NotificationStatus.SENDING).update(
        status=NotificationStatus.SENT, sent_at=timezone.now(), updated_at=timezone.now()
    )
    return True


def build_message(notification: Notification) -> EmailMultiAlternatives:
    booking = notification.booking
    tickets = list(booking.tickets.select_related("flight__origin").order_by("id"))
    base_url = settings.PUBLIC_BASE_URL.rstrip("/")
    context = {
        "booking": booking,
        "flight": booking.flight,
        "customer": booking.customer,
        "tickets": [
            {
                "ticket": t,
                "pdf_url": base_url + reverse("bookings:ticket-pdf", args=[booking.pk, t.pk]),
            }
            for t in tickets
        ],
        "base_url": base_url,
        **notification.context,
    }
    template = f"emails/{notification.kind}"
    message = EmailMultiAlternatives(
        subject=SUBJECTS[notification.kind].format(flight=booking.flight.code),
        body=render_to_string(f"{template}.txt", context),
        to=[notification.to],
        headers={"X-Seatkeeper-Notification": str(notification.pk)},
    )
    message.attach_alternative(render_to_string(f"{template}.html", context), "text/html")
    if notification.kind == NotificationKind.BOOKING_CONFIRMED:
        for t in tickets:
            name = f"boarding-pass-{booking.flight.code}-{t.seat_no or t.serial}.pdf"
            message.attach(name, ticket_pdf(t), "application/pdf")
    return message


def redispatch_stale_notifications(*, now: datetime | None = None) -> int:
    """Send again what was lost between commit and worker: PENDING rows whose dispatch never
    arrived, and SENDING rows whose worker died (older than any task time limit)."""
    now = now or timezone.now()
    cutoff = now - settings.NOTIFICATIONS["STALE_AFTER"]
    with transaction.atomic():
        stale = list(
            Notification.objects.select_for_update(skip_locked=True)
            .filter(
                status__in=[NotificationStatus.PENDING, NotificationStatus.SENDING],
                updated_at__lt=cutoff,
            )
            .values_list("pk", flat=True)[:500]
        )
        # Touching updated_at spaces the next attempt by STALE_AFTER again.
        Notification.objects.filter(pk__in=stale).update(
            status=NotificationStatus.PENDING, updated_at=now
        )
        for pk in stale:
            transaction.on_commit(partial(dispatch_notification, pk), robust=True)
    return len(stale)
