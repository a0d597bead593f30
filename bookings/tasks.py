"""Celery tasks: ids in, a service call, safe to run twice (acks_late redelivers)."""

from __future__ import annotations

from celery import shared_task

from bookings import lifecycle, notifications


@shared_task(name="bookings.expire_holds", ignore_result=True)
def expire_holds() -> int:
    return lifecycle.expire_holds()


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
