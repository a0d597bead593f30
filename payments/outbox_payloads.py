"""The payload of every outbox event type payments emit: one builder per type, used by the
emitter and by the tests' helpers alike (kernel.outbox_types lists every type)."""

from __future__ import annotations

from typing import Any

from kernel.outbox_types import OutboxEventType
from payments.models import Refund


def refund_issued(refund: Refund, *, booking_id: int, sale_id: int) -> dict[str, Any]:
    """`refund.issued`.  The engine's sale only, like every booking event: partners add
    flightId / eventId from the catalogue (partners.services.public_payload)."""
    return {
        "bookingId": booking_id,
        "saleId": sale_id,
        "refundId": refund.pk,
        "paymentId": refund.payment_id,
        "amount": str(refund.amount),
        "currency": refund.currency,
        "reason": refund.reason,
    }


BUILDERS = {OutboxEventType.REFUND_ISSUED: refund_issued}
