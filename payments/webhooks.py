"""Service behind POST /api/payments/webhook: verify, record once, apply in any order.

The event row and the change it causes commit together.  A concurrent duplicate blocks on the
unique event id until the first delivery commits, then is acknowledged and ignored; if the
first delivery fails, its row rolls back with it and the gateway's retry processes the event.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, connection, connections, router, transaction
from django.utils import timezone

from kernel.compiled import CompiledRead
from kernel.compiled_inserts import CompiledInsert
from kernel.locking import lock_errors_as_too_busy
from payments.captures import refund_unmatched_capture
from payments.errors import WebhookEventRefused
from payments.gateways import get_gateway
from payments.gateways.base import PAYMENT_FAILED, PAYMENT_SUCCEEDED, GatewayEvent
from payments.models import Payment, WebhookEvent
from payments.outcomes import SETTLED_PAYMENT_STATUSES, confirm_payment, fail_payment

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WebhookOutcome:
    event_id: str
    duplicate: bool
    outcome: str


def receive_webhook(
    *, body: bytes, headers: Mapping[str, str], gateway_name: str | None = None
) -> WebhookOutcome:
    gateway = get_gateway(gateway_name)
    event = gateway.parse_webhook(body=body, headers=headers)  # WebhookSignatureInvalid → 400
    refusal = gateway.refusal(event)
    outcome = record_and_apply(gateway_name=gateway.name, event=event, refusal=refusal)
    if refusal:
        # Recorded (committed above), applied never, and the sender is told so.
        log.warning("refused %s webhook %s: %s", gateway.name, event.event_id, refusal)
        raise WebhookEventRefused(f"Event {event.event_id} refused: {refusal}.")
    return outcome


@lock_errors_as_too_busy
def record_and_apply(
    *, gateway_name: str, event: GatewayEvent, refusal: str = ""
) -> WebhookOutcome:
    with transaction.atomic():
        if settings.USES_POSTGRES:
            # Answer fast: rather than queue behind a long lock, say 503 and let the gateway retry.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('lock_timeout', %s, true)",
                    [f"{settings.PAYMENTS['WEBHOOK_LOCK_TIMEOUT_MS']}ms"],
                )
        # ON CONFLICT DO NOTHING: a duplicate writes nothing and raises nothing, so no
        # savepoint is needed around it.  It still waits for a concurrent delivery of the same
        # event to end (then does nothing if that one committed, inserts if it rolled back).
        try:
            record = _WEBHOOK_EVENT_INSERT.create(
                gateway=gateway_name,
                event_id=event.event_id,
                event_type=event.kind,
                payload=event.payload,
                received_at=timezone.now(),
            )
        except IntegrityError:
            # Another constraint refused the row: answered as before (when a savepoint caught
            # every IntegrityError); the transaction, marked for rollback, wrote nothing.
            record = None
        if record is None:
            return WebhookOutcome(event.event_id, duplicate=True, outcome="duplicate, ignored")
        outcome = f"refused: {refusal}" if refusal else _apply(gateway_name, event)
        _record_outcome(record.pk, outcome)
    return WebhookOutcome(event.event_id, duplicate=False, outcome=outcome)


# `WebhookEvent.objects.create(...)` with ON CONFLICT DO NOTHING (kernel.compiled_inserts).
_WEBHOOK_EVENT_INSERT = CompiledInsert(WebhookEvent, ignore_conflicts=True)


def _record_outcome(event_pk: int, outcome: str) -> None:
    """`WebhookEvent.objects.filter(pk=...).update(outcome=, processed_at=)`, as plain SQL
    (tests/payments/test_webhook_compiled_reads.py compares it with the ORM's)."""
    db = connections[router.db_for_write(WebhookEvent)]
    with db.cursor() as cursor:
        cursor.execute(
            _OUTCOME_SQL,
            [outcome[:200], db.ops.adapt_datetimefield_value(timezone.now()), event_pk],
        )


_OUTCOME_SQL = (
    f'UPDATE "{WebhookEvent._meta.db_table}" SET "outcome" = %s, "processed_at" = %s '
    f'WHERE "{WebhookEvent._meta.db_table}"."id" = %s'
)


def _apply(gateway_name: str, event: GatewayEvent) -> str:
    if event.kind not in (PAYMENT_SUCCEEDED, PAYMENT_FAILED):
        return f"ignored: {event.kind} is not handled"
    if event.payment_id is not None:
        payment = _GATEWAYS_PAYMENT.first(gateway=gateway_name, payment_id=event.payment_id)
    else:
        payment = (
            Payment.objects.filter(gateway=gateway_name, gateway_reference=event.reference).first()
            if event.reference
            else None
        )
    if payment is None:
        return "ignored: unknown payment"
    if event.amount is not None and (
        event.amount != payment.amount or event.currency.upper() != payment.currency
    ):
        if event.kind == PAYMENT_SUCCEEDED:
            # Captured, but not what the booking costs: it cannot confirm, and the money goes
            # back (never "ignored" with the money kept).
            payment = refund_unmatched_capture(
                payment_id=payment.pk,
                captured=event.amount,
                currency=event.currency,
                reference=event.reference,
            )
            return (
                f"amount {event.amount} {event.currency} does not match payment {payment.pk}: "
                f"refund {payment.status}"
            )
        return (
            f"ignored: amount {event.amount} {event.currency} does not match payment {payment.pk}"
        )
    if event.kind == PAYMENT_SUCCEEDED and payment.status in SETTLED_PAYMENT_STATUSES:
        # The pay request (or an earlier event) applied this success already, and a settled
        # payment never becomes unsettled: confirm_payment would take both locks only to
        # return it unchanged.  Most webhooks are this one.
        return f"payment {payment.pk} is {payment.status}"
    if event.kind == PAYMENT_SUCCEEDED:
        payment = confirm_payment(
            payment_id=payment.pk, reference=event.reference, booking_id=payment.booking_id
        )
    else:
        payment = fail_payment(
            payment_id=payment.pk, reference=event.reference, reason=event.failure_reason
        )
    return f"payment {payment.pk} is {payment.status}"


# Compiled once per connection (kernel.compiled): nearly every webhook names its payment.
# `Payment.objects.filter(gateway=...).filter(pk=...).first()` (the model's ordering), as
# tests/payments/test_webhook_compiled_reads.py compares.
_GATEWAYS_PAYMENT = CompiledRead(
    Payment,
    lambda gateway, payment_id: Payment.objects.filter(gateway=gateway).filter(pk=payment_id)[:1],
    gateway=str,
    payment_id=int,
)
