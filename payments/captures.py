"""Money the gateway took that cannot pay for the booking: it always goes back.

A correctly signed success whose amount or currency is not the payment's (a price the
gateway rounded, a charge edited on the gateway's side) cannot confirm the booking; the
money is captured all the same.  Acknowledging the event and doing nothing would keep it.
"""

from __future__ import annotations

import logging
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from payments.models import Payment, PaymentStatus, RefundReason
from payments.refunds import create_refund

log = logging.getLogger(__name__)
ALREADY_SETTLED = (PaymentStatus.SUCCEEDED, PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED)


def refund_unmatched_capture(
    *, payment_id: int, captured: Decimal, currency: str, reference: str = ""
) -> Payment:
    """Record that `captured` `currency` was taken for `payment_id` without matching it, and
    pay exactly that back.  The booking is not confirmed (its hold runs on: the customer may
    pay again).  Idempotent: a settled payment is left as it is."""
    with transaction.atomic():
        payment = Payment.objects.select_for_update().get(pk=payment_id)
        if payment.status in ALREADY_SETTLED:
            log.warning(
                "payment %s is %s; an unmatched capture of %s %s for it was not applied",
                payment.pk,
                payment.status,
                captured,
                currency,
            )
            return payment
        now = timezone.now()
        note = (
            f"captured {captured} {currency.upper()}, but the booking costs "
            f"{payment.amount} {payment.currency}: refunded"
        )
        # The row now says what the gateway took (the refund is checked against it); what
        # was asked stays in the note.
        Payment.objects.filter(pk=payment.pk).update(
            status=PaymentStatus.REFUND_REQUIRED,
            amount=captured,
            currency=currency.upper(),
            gateway_reference=reference or payment.gateway_reference,
            failure_reason=note[:200],
            succeeded_at=now,
            updated_at=now,
        )
        payment.refresh_from_db()
        if captured > 0:
            create_refund(payment, amount=captured, reason=RefundReason.AMOUNT_MISMATCH, now=now)
    log.error("payment %s: %s", payment.pk, note)
    return payment
