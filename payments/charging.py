"""The gateway call of a payment, and what a pay request answers.

Rule of the payments modules: a gateway call never runs inside a database transaction and
never while this process holds a row lock.  Each pay request is three steps: (1) a short
transaction that records the payment and claims the Idempotency-Key (`payments.paying`),
(2) the gateway call in autocommit (here), (3) a short transaction that applies the result
(`payments.outcomes`).  Locks follow the one lock order in docs/architecture.md ("Lock order").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, connections, router
from django.utils import timezone

from kernel.compiled import CompiledRead
from kernel.idempotency import IdempotentResult
from kernel.web.id_urls import id_url
from payments.currency import NotChargeable
from payments.errors import GatewayError
from payments.gateways import get_gateway
from payments.gateways.base import ChargeResult
from payments.models import Payment
from payments.selectors import payment_response, payment_with_booking_status

# What a pay request answers; a replay carries `replayed=True` (kernel.idempotency's rules).
PayResponse = IdempotentResult


def assert_no_transaction() -> None:
    """Guard in front of every gateway call: a network wait must never hold rows locked."""
    if connection.in_atomic_block:
        raise RuntimeError("Gateway calls must not run inside a database transaction.")


def charge_params(payment: Payment, payment_method: str) -> dict[str, Any]:
    """The outbound call, identical every time for one payment: the gateway's idempotency
    key only replays a request with the same parameters."""
    return {
        "payment_id": payment.pk,
        "amount": payment.amount,
        "currency": payment.currency,
        "idempotency_key": f"seatkeeper-payment-{payment.pk}",
        "payment_method": payment_method,
        "description": f"Seatkeeper booking {payment.booking_id}",
        "return_url": settings.PUBLIC_BASE_URL.rstrip("/")
        + id_url("bookings:detail", payment.booking_id),
    }


def charge(payment: Payment, payment_method: str) -> ChargeResult:
    """Step 2: the gateway call, in autocommit, holding nothing."""
    assert_no_transaction()
    try:
        return get_gateway(payment.gateway).create_payment(**charge_params(payment, payment_method))
    except GatewayError:
        return ChargeResult(status="failed", reference="", failure_reason="gateway_unavailable")
    except NotChargeable:
        # A price the catalogue check should have refused (edited in the database, or from
        # before the check): nothing is sent, rather than a rounded amount.
        return ChargeResult(status="failed", reference="", failure_reason="amount_not_chargeable")


def store_response(payment_id: int, *, known: Payment | None = None) -> PayResponse:
    """Write the answer the payment's Idempotency-Key replays from now on (the first one wins).

    `known`: the payment as the caller's own transaction left it; when it carries its
    booking's status (`current_booking_status`: `payments.outcomes.confirm_payment` sold it)
    the answer is built from it, without reading them again after the commit (a later
    change, such as a cancellation, is its own request's to report)."""
    booking_status = getattr(known, "current_booking_status", None)
    if known is not None and known.pk == payment_id and booking_status is not None:
        payment = known
    else:
        payment, booking_status = payment_with_booking_status(payment_id)
    status, body = payment_response(payment, booking_status=booking_status)
    db = connections[router.db_for_write(Payment)]
    params = [
        status,
        _RESPONSE_BODY.get_db_prep_save(body, db),
        db.ops.adapt_datetimefield_value(timezone.now()),
        payment_id,
    ]
    # What was stored, not the body just built: a replay answers the stored jsonb's bytes, so
    # the first answer does too.  The update returns it when it wrote it; otherwise another
    # writer won (or there is no such payment), and its answer is read back.
    stored = _STORED_RESPONSE.returned_rows(_STORE_RESPONSE_RETURNING_SQL, params, using=db.alias)
    if not stored:
        stored = _STORED_RESPONSE.rows(payment_id=payment_id)
    if not stored:
        raise Payment.DoesNotExist(f"Payment {payment_id} does not exist.")
    return PayResponse(*stored[0])


# What `Payment.objects.filter(pk=..., response_status__isnull=True).update(response_status=,
# response_body=, updated_at=)` sends (tests/payments/test_pay_compiled_reads.py), without
# compiling it again for every payment: the first answer stored wins.
_STORE_RESPONSE_SQL = (
    f'UPDATE "{Payment._meta.db_table}" SET "response_status" = %s, "response_body" = %s, '
    f'"updated_at" = %s WHERE ("{Payment._meta.db_table}"."id" = %s '
    f'AND "{Payment._meta.db_table}"."response_status" IS NULL)'
)
# ...returning the columns `_STORED_RESPONSE` reads, in its order (one round trip, not two).
_STORE_RESPONSE_RETURNING_SQL = (
    f'{_STORE_RESPONSE_SQL} RETURNING "{Payment._meta.db_table}"."response_status", '
    f'"{Payment._meta.db_table}"."response_body"'
)
_RESPONSE_BODY = Payment._meta.get_field("response_body")

# Compiled once per connection (kernel.compiled): every payment request stores its answer.
_STORED_RESPONSE = CompiledRead(
    Payment,
    lambda payment_id: (
        Payment.objects.filter(pk=payment_id)
        .order_by()
        .values_list("response_status", "response_body")
    ),
    payment_id=int,
)
