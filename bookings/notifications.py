"""E-mail notifications: decided inside a transaction (a Notification row), sent after it.

One row per (event, kind) (a unique constraint), so an outbox event redelivered after a
killed worker never decides a second e-mail.  Sending is three committed steps, and the row is
the sent-receipt:

  PENDING -> PREPARING   claimed with a conditional update: two workers never send one row.
                         Rendering (ticket PDFs) happens here; a worker that dies now has sent
                         nothing, so the stale sweep puts the row back to PENDING.
  PREPARING -> SENDING   the receipt, committed *before* the message is handed to the mail
                         backend.  The backend call is the only moment whose outcome a crash
                         can hide.
  SENDING -> SENT        reconciled after the backend accepted the message.

A backend that raises (SMTP refused, timed out before accepting) sent nothing we know of: the
row goes back to PENDING and is retried.  A row found SENDING by the stale sweep belonged to
a worker that died *during or right after* the hand-over: it may have been sent.  We choose
**at most once** for that window and mark it UNCERTAIN, never resending it on our own: a
customer must never get the same e-mail twice, and staff can resend an UNCERTAIN one after
checking the mail log (the message carries a stable `Message-ID`, `X-Seatkeeper-Notification`
header, to search for).  Everywhere else delivery is exactly once.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from bookings import catalogue
from bookings.models import Booking, Notification, NotificationKind, NotificationStatus, Sale
from kernel.models import OutboxEvent
from languages.selectors import language_for_customer

logger = logging.getLogger(__name__)


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
    decided = Notification.objects.filter(sale_id=booking.sale_id, event=event, kind=kind)
    if event is not None and decided.exists():
        return None  # this event's e-mail was decided already (a redelivered event)
    # No savepoint of its own (two round trips fewer per e-mail, issue 26): the send is
    # tied to the caller's transaction, which drops it if the row is rolled back; outside
    # one, the row is committed by the INSERT and the send follows at once.
    notification = Notification.objects.create(
        sale_id=booking.sale_id,
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


def _move(notification_id: int, from_status: str, **changes: Any) -> bool:
    with transaction.atomic():
        return bool(
            Notification.objects.filter(pk=notification_id, status=from_status).update(
                updated_at=timezone.now(), **changes
            )
        )


def send_notification(*, notification_id: int) -> bool:
    """Send one pending notification; False if it was not pending (sent, being sent, or
    perhaps sent by a worker that died)."""
    if not _move(
        notification_id,
        NotificationStatus.PENDING,
        status=NotificationStatus.PREPARING,
        attempts=F("attempts") + 1,
    ):
        return False
    notification = Notification.objects.select_related(
        "booking__customer", "booking__sale", *catalogue.owner_paths("booking__sale__")
    ).get(pk=notification_id)
    try:
        message = build_message(notification)
        # The receipt before the send: from here on a crash means "maybe sent", never "resend".
        if not _move(
            notification_id, NotificationStatus.PREPARING, status=NotificationStatus.SENDING
        ):
            return False  # the stale sweep took it back meanwhile; its next claimer sends
        message.send()
    except Exception as exc:
        # Rendering failed, or the backend refused the message: nothing reached anybody.
        gave_up = notification.attempts >= settings.NOTIFICATIONS["MAX_ATTEMPTS"]
        Notification.objects.filter(
            pk=notification_id,
            status__in=[NotificationStatus.PREPARING, NotificationStatus.SENDING],
        ).update(
            status=NotificationStatus.FAILED if gave_up else NotificationStatus.PENDING,
            last_error=repr(exc)[:2000],
            updated_at=timezone.now(),
        )
        raise
    _move(
        notification_id,
        NotificationStatus.SENDING,
        status=NotificationStatus.SENT,
        sent_at=timezone.now(),
    )
    return True


def build_message(notification: Notification) -> EmailMultiAlternatives:
    """The e-mail, its PDF tickets (boarding passes, entry tickets) included, in the
    customer's own language (the one they chose on the pages; the site's default otherwise):
    workers have no request to ask."""
    language = language_for_customer(user_id=notification.booking.customer_id)
    with translation.override(language):
        return _build_message(notification)


def email_templates(sale: Sale, name: str) -> list[str]:
    """The catalogue's own wording of e-mail `name` first (emails/flight/...), then the
    wording for any sale, which speaks of it through `catalogue.describe`."""
    return [f"emails/{sale.kind.lower()}/{name}", f"emails/{name}"]


def _build_message(notification: Notification) -> EmailMultiAlternatives:
    booking = notification.booking
    sale = booking.sale
    summary = catalogue.describe(sale)
    starts_local = summary.starts_at.astimezone(ZoneInfo(summary.time_zone))
    tickets = list(booking.tickets.order_by("id"))
    for t in tickets:
        t.sale = sale  # one sale, already read with its catalogue item
    faces = [catalogue.ticket_face(t) for t in tickets]
    base_url = settings.PUBLIC_BASE_URL.rstrip("/")
    owner = catalogue.owner_item(sale)
    context = {
        "booking": booking,
        "customer": booking.customer,
        # The sale in words any template can print, and its catalogue item (`flight`,
        # `event`) for the catalogue's own templates.
        "sale": summary,
        "starts_local": starts_local,
        "starts_zone": starts_local.tzname(),
        **({owner[0]: owner[1]} if owner else {}),
        "tickets": [
            {
                "ticket": t,
                "face": face,
                "pdf_url": base_url + reverse("bookings:ticket-pdf", args=[booking.pk, t.pk]),
            }
            for t, face in zip(tickets, faces, strict=True)
        ],
        "base_url": base_url,
        **notification.context,
    }
    kind = notification.kind
    subject = render_to_string(email_templates(sale, f"{kind}.subject.txt"), context)
    message = EmailMultiAlternatives(
        subject=" ".join(subject.split()),
        body=render_to_string(email_templates(sale, f"{kind}.txt"), context),
        to=[notification.to],
        headers={
            "X-Seatkeeper-Notification": str(notification.pk),
            # Stable per notification: mail systems that see it twice show it once.
            "Message-ID": f"<notification-{notification.pk}@seatkeeper>",
        },
    )
    html = render_to_string(email_templates(sale, f"{kind}.html"), context)
    message.attach_alternative(html, "text/html")
    if kind == NotificationKind.BOOKING_CONFIRMED:
        # The worker's first confirmation loads the renderer, not every web process's start.
        from bookings.ticket_render import ticket_pdf

        for t, face in zip(tickets, faces, strict=True):
            message.attach(f"{face.file_stem}.pdf", ticket_pdf(t), "application/pdf")
    return message


def redispatch_stale_notifications(*, now: datetime | None = None) -> int:
    """Send again what was lost between commit and worker: PENDING rows whose dispatch never
    arrived, and PREPARING rows whose worker died before the hand-over (older than any task
    time limit).  SENDING rows whose worker died are marked UNCERTAIN and not sent again
    (at most once: see the module docstring)."""
    now = now or timezone.now()
    cutoff = now - settings.NOTIFICATIONS["STALE_AFTER"]
    with transaction.atomic():
        uncertain = Notification.objects.filter(
            status=NotificationStatus.SENDING, updated_at__lt=cutoff
        ).update(status=NotificationStatus.UNCERTAIN, updated_at=now)
        if uncertain:
            logger.warning("%s e-mails may or may not have been sent (worker died)", uncertain)
        stale = list(
            Notification.objects.select_for_update(skip_locked=True)
            .filter(
                status__in=[NotificationStatus.PENDING, NotificationStatus.PREPARING],
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
