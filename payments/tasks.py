"""Celery tasks: ids in, a service call, retries with backoff.  No business logic here."""

import logging

from celery import shared_task
from django.conf import settings

from kernel import kicks
from kernel.idempotency import purge_idempotency_records
from payments.errors import GatewayError
from payments.gateways import sandbox_delivery
from payments.paying import purge_idempotency_keys
from payments.reconciliation import reconcile_stuck_payments
from payments.refunds import issue_refund, requeue_stale_refunds

log = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, max_retries=None)
def deliver_sandbox_event(self, event_id: str) -> int:
    """The sandbox provider POSTs one event to our webhook; any non-2xx answer is retried."""
    status = sandbox_delivery.deliver_event(event_id=event_id)
    if 200 <= status < 300:
        return status
    if self.request.retries >= settings.PAYMENTS_SANDBOX["MAX_RETRIES"]:
        log.error(
            "sandbox event %s undeliverable after %s attempts (last status %s)",
            event_id,
            self.request.retries + 1,
            status,
        )
        return status
    raise self.retry(countdown=sandbox_delivery.backoff_seconds(self.request.retries))


@shared_task(name="payments.queue_sandbox_deliveries", ignore_result=True)
def queue_sandbox_deliveries(max_batches: int = 20) -> int:
    """Publish the delivery of every sandbox event not yet queued (kicked after a commit that
    wrote some, and by beat every second)."""
    kicks.taken(queue_sandbox_deliveries, sandbox_delivery.SANDBOX_DELIVERIES)  # before reading
    queued = 0
    for _ in range(max_batches):
        claimed = sandbox_delivery.queue_deliveries()
        queued += claimed
        if claimed < sandbox_delivery.BATCH_SIZE:
            break
    return queued


@shared_task(bind=True, acks_late=True, max_retries=None)
def issue_refund_task(self, refund_id: int) -> str:
    try:
        return issue_refund(refund_id=refund_id).status
    except GatewayError as exc:
        if self.request.retries >= settings.PAYMENTS["REFUND_MAX_RETRIES"]:
            log.error(
                "refund %s still failing after %s attempts: %s",
                refund_id,
                self.request.retries + 1,
                exc,
            )
            raise
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 3600)) from exc


@shared_task
def purge_idempotency_keys_task() -> int:
    # Payments' keys and holds' keys share one retention period (kernel.idempotency).
    return purge_idempotency_keys() + purge_idempotency_records()


@shared_task
def retry_pending_refunds() -> int:
    return requeue_stale_refunds()


@shared_task
def reconcile_stuck_payments_task() -> int:
    return reconcile_stuck_payments()
