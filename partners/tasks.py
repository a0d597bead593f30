"""Celery tasks: ids in, a service call.  Retries are scheduled from the delivery row's own
attempt count (exponential backoff), so a redelivered message never resets the schedule."""

from __future__ import annotations

from celery import shared_task

from partners import services


@shared_task(name="partners.deliver_webhook", ignore_result=True)
def deliver_webhook(delivery_id: int) -> str | None:
    attempt = services.attempt_delivery(delivery_id=delivery_id)
    if attempt is None:
        return None
    if attempt.retry_in is not None:
        services.dispatch_delivery(delivery_id, countdown=attempt.retry_in)
    return attempt.status


@shared_task(name="partners.resend_due_deliveries", ignore_result=True)
def resend_due_deliveries() -> int:
    return services.resend_due_deliveries()
