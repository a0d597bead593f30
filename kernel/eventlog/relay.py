"""The event-log relay: unlogged outbox events, in id order, into the log; then marked.

PostgreSQL stays the truth.  An event is marked `logged_at` only after the log acknowledged
it, so a relay that dies between the two leaves it unmarked and the next relay publishes it
again: at least once.  The log drops that second copy itself (its message id is the event id,
within `DUPLICATE_WINDOW_SECONDS`), and consumers dedupe on the same id beyond it.

One relay publishes at a time (a lease in `kernel.RelayLease`), so the log's order of a
booking's events is the outbox's id order.  Two relays at once (a lease that ran out under a
slow holder) still keep that order: each publishes in id order and waits for each ack, so a
booking's earlier event is stored before any relay sends its later one; the late copies are
duplicates.  No outbox row is locked: our own relay (`kernel.outbox.relay_outbox`) claims
rows with SKIP LOCKED, and the log must never make it skip one.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import DateTimeField, ExpressionWrapper, Q
from django.db.models.functions import Now
from django.utils import timezone

from kernel import metrics
from kernel.eventlog.envelope import message_for
from kernel.eventlog.publisher import Publisher, get_publisher
from kernel.models import OutboxEvent, RelayLease

logger = logging.getLogger(__name__)
LEASE = "event-log"


@dataclass
class EventLogReport:
    leased: bool = True  # False: another relay holds the lease, this one did nothing
    read: int = 0
    logged: int = 0
    duplicates: int = 0  # acknowledged as already in the log (a re-publish after a crash)
    error: str = ""


def relay_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def relay_event_log(
    *, publisher: Publisher | None = None, batch_size: int | None = None, holder: str | None = None
) -> EventLogReport:
    """Publish one batch of unlogged events, oldest first, if this relay gets the lease."""
    holder = holder or relay_holder()
    if not take_lease(name=LEASE, holder=holder, seconds=settings.EVENT_LOG["LEASE_SECONDS"]):
        return EventLogReport(leased=False)
    try:
        return _relay_batch(
            publisher=publisher or get_publisher(),
            batch_size=batch_size or settings.EVENT_LOG["BATCH_SIZE"],
        )
    finally:
        release_lease(name=LEASE, holder=holder)


def _relay_batch(*, publisher: Publisher, batch_size: int) -> EventLogReport:
    events = list(OutboxEvent.objects.filter(logged_at__isnull=True).order_by("id")[:batch_size])
    report = EventLogReport(read=len(events))
    if not events:
        return report
    prefix = settings.EVENT_LOG["SUBJECT_PREFIX"]
    published = publisher.publish([message_for(event, prefix=prefix) for event in events])
    if published.acknowledged:
        report.logged = mark_logged(event_ids=[e.pk for e in events[: published.acknowledged]])
        report.duplicates = published.duplicates
    if published.error is not None:
        # The rest stays unmarked and is retried by the next tick, in order.
        report.error = repr(published.error)
        metrics.count("event_log_publish_failures")
        logger.warning(
            "event log: %s of %s events published, then %r",
            published.acknowledged,
            len(events),
            published.error,
        )
    return report


def mark_logged(*, event_ids: list[int]) -> int:
    with transaction.atomic():
        return OutboxEvent.objects.filter(pk__in=event_ids, logged_at__isnull=True).update(
            logged_at=timezone.now()
        )


# --- the lease: one relay at a time -----------------------------------------------------------


def _db_now_plus(seconds: float) -> ExpressionWrapper:
    # The database's clock, not this host's: two relays on two hosts agree on expiry.
    return ExpressionWrapper(Now() + timedelta(seconds=seconds), output_field=DateTimeField())


def take_lease(*, name: str, holder: str, seconds: float) -> bool:
    """Take (or renew) the lease `name` for `holder` if it is free, expired or already ours."""
    with transaction.atomic():
        free_or_ours = RelayLease.objects.filter(name=name).filter(
            Q(holder=holder) | Q(expires_at__lt=Now())
        )
        if free_or_ours.update(holder=holder, expires_at=_db_now_plus(seconds)):
            return True
        if RelayLease.objects.filter(name=name).exists():
            return False
        # First use: the row is born expired, then taken by the same conditional update, so
        # two first relays at once still end with one holder.
        RelayLease.objects.bulk_create(
            [RelayLease(name=name, holder="", expires_at=timezone.now() - timedelta(days=1))],
            ignore_conflicts=True,
        )
        return bool(free_or_ours.update(holder=holder, expires_at=_db_now_plus(seconds)))


def release_lease(*, name: str, holder: str) -> None:
    with transaction.atomic():
        RelayLease.objects.filter(name=name, holder=holder).update(expires_at=Now())
