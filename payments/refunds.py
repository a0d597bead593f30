"""Refunds: created inside the change that owes them, sent through the gateway after commit,
recorded with their `refund.issued` outbox row.  Gateway calls follow payments.charging's rule
(never inside a transaction)."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from bookings.models import Booking
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType
from payments.charging import assert_no_transaction
from payments.gateways import get_gateway
from payments.models import Payment, PaymentStatus, Refund, RefundStatus
from payments.outbox_payloads import refund_issued


def create_refund(
    payment: Payment, *, amount: Decimal, reason: str, now: datetime, **audit: Any
) -> Refund:
    """A PENDING refund of `payment`, queued for after the caller's commit.  `audit`:
    approved_by, goodwill, policy_amount (a staff cancellation's record)."""
    refund = Refund.objects.create(
        payment=payment,
        sale_id=payment.sale_id,
        amount=amount,
        currency=payment.currency,
        reason=reason,
        created_at=now,
        **audit,
    )
    transaction.on_commit(lambda: queue_refund(refund_id=refund.pk))
    return refund


def queue_refund(*, refund_id: int) -> None:
    from payments.tasks import issue_refund_task

    issue_refund_task.delay(refund_id)


def requeue_stale_refunds(
    *, now: datetime | None = None, grace: timedelta = timedelta(minutes=10)
) -> int:
    """Safety net for refunds whose task was lost (broker restart): queue again every refund
    still PENDING after `grace`.  Sending twice is harmless: the outbound idempotency key and
    the conditional PENDING -> SUCCEEDED update in `issue_refund` make it so."""
    cutoff = (now or timezone.now()) - grace
    stale = list(
        Refund.objects.filter(status=RefundStatus.PENDING, created_at__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    for refund_id in stale:
        queue_refund(refund_id=refund_id)
    return len(stale)


def issue_refund(*, refund_id: int) -> Refund:
    """Send a pending refund through the payment's gateway, then record it with its outbox row.

    Raises GatewayError when the gateway cannot be reached (the task retries with backoff);
    the outbound idempotency key makes a retry after an unknown outcome harmless."""
    refund = Refund.objects.select_related("payment").get(pk=refund_id)
    if refund.status != RefundStatus.PENDING:
        return refund
    payment = refund.payment
    assert_no_transaction()
    result = get_gateway(payment.gateway).refund(
        reference=payment.gateway_reference,
        amount=refund.amount,
        currency=refund.currency,
        idempotency_key=f"seatkeeper-refund-{refund.pk}",
    )
    now = timezone.now()
    with transaction.atomic():
        if not result.succeeded:
            Refund.objects.filter(pk=refund_id, status=RefundStatus.PENDING).update(
                status=RefundStatus.FAILED,
                failure_reason=result.failure_reason[:200],
                completed_at=now,
            )
            return Refund.objects.get(pk=refund_id)
        won = Refund.objects.filter(pk=refund_id, status=RefundStatus.PENDING).update(
            status=RefundStatus.SUCCEEDED, gateway_reference=result.reference, completed_at=now
        )
        if won:
            _record_refunded(refund, now=now)
    return Refund.objects.get(pk=refund_id)


def _record_refunded(refund: Refund, *, now: datetime) -> None:
    """The refund went through (the caller won its PENDING -> SUCCEEDED update): add it to the
    payment's refunded amount and announce it."""
    payment = Payment.objects.select_for_update().get(pk=refund.payment_id)
    refunded = payment.refunded_amount + refund.amount
    fully = refunded == payment.amount or payment.status == PaymentStatus.REFUND_REQUIRED
    Payment.objects.filter(pk=payment.pk).update(
        refunded_amount=refunded,
        updated_at=now,
        status=PaymentStatus.REFUNDED if fully else payment.status,
    )
    sale_id = Booking.objects.values_list("sale_id", flat=True).get(pk=payment.booking_id)
    emit_event(
        sale_id=sale_id,
        aggregate_type="booking",
        aggregate_id=payment.booking_id,
        event_type=OutboxEventType.REFUND_ISSUED,
        payload=refund_issued(refund, booking_id=payment.booking_id, sale_id=sale_id),
    )
