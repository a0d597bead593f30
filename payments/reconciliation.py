"""Settling payments a crash or an abandoned checkout left open: the gateway is asked where
each stands, and that answer is applied (beat runs `reconcile_stuck_payments`)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from bookings.models import BookingStatus
from payments.charging import assert_no_transaction, charge_params, store_response
from payments.errors import GatewayError
from payments.gateways import get_gateway
from payments.models import Payment, PaymentStatus
from payments.outcomes import apply_charge_result, supersede_payment


def reconcile_payment(*, payment_id: int) -> Payment:
    """Settle a payment left PROCESSING by a crash between its steps: ask the gateway by our
    outbound idempotency key where the charge stands, apply that, and store the answer its
    Idempotency-Key replays from now on (instead of 409 "still running" forever)."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status != PaymentStatus.PROCESSING:
        return payment
    assert_no_transaction()
    try:
        result = get_gateway(payment.gateway).reconcile(
            **charge_params(payment, payment.payment_method_token)
        )
    except GatewayError:
        return payment  # the next beat tick asks again
    apply_charge_result(payment_id=payment.pk, result=result)
    store_response(payment.pk)
    return Payment.objects.get(pk=payment_id)


def reconcile_stuck_payments(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat job: every payment PROCESSING for longer than any request can take, and every
    PENDING one (a hosted checkout, 3-D Secure) whose hold is over.  A PENDING payment is
    cancelled at the gateway, or, when the customer paid after all, that success is applied
    (and refunded, the hold being gone): money is never left captured with nobody to say so."""
    now = now or timezone.now()
    cutoff = now - settings.PAYMENTS["RECONCILE_AFTER"]
    stuck = list(
        Payment.objects.filter(status=PaymentStatus.PROCESSING, updated_at__lt=cutoff)
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    for payment_id in stuck:
        reconcile_payment(payment_id=payment_id)
    lapsed = list(
        Payment.objects.filter(status=PaymentStatus.PENDING, updated_at__lt=cutoff)
        .filter(~Q(booking__status=BookingStatus.HELD) | Q(booking__expires_at__lt=now))
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    for payment_id in lapsed:
        supersede_payment(payment_id=payment_id)
    return len(stuck) + len(lapsed)
