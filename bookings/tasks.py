"""Celery tasks: ids in, a service call, safe to run twice (acks_late redelivers)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from bookings import notifications, outbox, services


@shared_task(name="bookings.relay_outbox", ignore_result=True)
def relay_outbox(max_batches: int = 20) -> int:
    """Relay due outbox events until none are left (or `max_batches`, to stay short)."""
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


@shared_task(name="bookings.expire_holds", ignore_result=True)
def expire_holds() -> int:
    return services.expire_holds()


@shared_task(
    name="bookings.send_notification",
    ignore_result=True,
    autoretry_for=(Exception,),
    retry_backoff=5,
    retry_backoff_max=600,
    max_retries=4,
)
def send_notification(notification_id: int) -> bool:
    return notifications.send_notification(notification_id=notification_id)


@shared_task(name="bookings.redispatch_stale_notifications", ignore_result=True)
def redispatch_stale_notifications() -> int:
    return notifications.redispatch_stale_notifications()


@shared_task(name="bookings.purge_published_outbox", ignore_result=True)
def purge_published_outbox(keep_days: int = 14) -> int:
    return outbox.purge_published(keep_days=keep_days)
