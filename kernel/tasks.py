"""The kernel's Celery tasks: the outbox relay and its housekeeping.  Thin: a service call.

The task names still say "bookings.": beat's table and messages already queued name them so
(they were born there), and a task name is a wire name, not an import path."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from kernel import kicks, outbox
from kernel.eventlog import event_log_enabled


@shared_task(name="bookings.relay_outbox", ignore_result=True)
def relay_outbox(max_batches: int = 20) -> int:
    """Relay due outbox events until none are left (or `max_batches`, to stay short)."""
    kicks.taken(relay_outbox, outbox.OUTBOX_RELAY)  # before the first read (kernel.kicks)
    published = 0
    for _ in range(max_batches):
        report = outbox.relay_outbox()
        published += report.published
        if report.claimed < settings.OUTBOX["RELAY_BATCH_SIZE"]:
            break
    return published


@shared_task(name="bookings.redeliver_event", ignore_result=True)
def redeliver_event(event_id: int) -> list[str]:
    return outbox.redeliver_event(event_id=event_id)


@shared_task(name="bookings.purge_published_outbox", ignore_result=True)
def purge_published_outbox(keep_days: int = 14) -> int:
    return outbox.purge_published(keep_days=keep_days)


@shared_task(name="kernel.relay_event_log", ignore_result=True)
def relay_event_log(max_batches: int = 20) -> int:
    """Publish unlogged outbox events to the event log (docs/event-log.md); off without
    EVENT_LOG_URL.  Stops early when another relay holds the lease or the log failed."""
    if not event_log_enabled():
        return 0
    kicks.taken(relay_event_log, outbox.EVENT_LOG_RELAY)  # before the first read
    # Imported here, not with the module: every web process imports this module to kick the
    # relay after a commit (kernel.outbox), and the event log's NATS client (nats-py, aiohttp:
    # ~100 modules) cost each of them 8.5 MB of RSS it never used (docs/performance.md,
    # "Issue 26: warm connections").  Only a worker with the log on needs it.
    from kernel.eventlog import relay as event_log

    logged = 0
    for _ in range(max_batches):
        report = event_log.relay_event_log()
        logged += report.logged
        if not report.leased or report.error or report.read < settings.EVENT_LOG["BATCH_SIZE"]:
            break
    return logged
