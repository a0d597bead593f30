"""The sandbox: a simulated payment provider built into Seatkeeper.

It keeps its own ledger (SandboxCharge / SandboxRefund / SandboxEvent), offers a hosted
checkout page, and tells us the outcome the way real providers do: signed webhooks sent over
real HTTP by a Celery task, retried with backoff until our endpoint answers 2xx (how they
are queued and sent: payments.gateways.sandbox_delivery).  Switches in
`settings.PAYMENTS_SANDBOX` make it misbehave on purpose (duplicates, delays, a failure event
after a success) so the webhook handler's idempotency is exercised, not assumed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from kernel.compiled import CompiledRead
from kernel.compiled_inserts import CompiledInsert
from payments.errors import PaymentMethodRefused, WebhookSignatureInvalid
from payments.gateways import sandbox_delivery
from payments.gateways.base import (
    PAYMENT_FAILED,
    PAYMENT_SUCCEEDED,
    ChargeResult,
    Gateway,
    GatewayEvent,
    RefundResult,
)
from payments.models import SandboxCharge, SandboxChargeStatus, SandboxEvent, SandboxRefund

SIGNATURE_HEADER = "Seatkeeper-Signature"

# Test cards, as on the hosted checkout page and in docs/payments.md.  No other number is
# taken: the API refuses it (400), the hosted checkout declines it.
APPROVED_CARD = "4242424242424242"
DECLINING_CARDS = {
    "4000000000000002": "card_declined",
    "4000000000009995": "insufficient_funds",
    "4000000000000069": "expired_card",
}
TEST_CARDS = {APPROVED_CARD: "", **DECLINING_CARDS}


def sandbox_settings() -> dict[str, Any]:
    return settings.PAYMENTS_SANDBOX


def _new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_urlsafe(18)}"


# --- signatures --------------------------------------------------------------------------------


def compute_signature(*, body: bytes, timestamp: int, secret: str) -> str:
    signed = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_header(*, body: bytes, secret: str, timestamp: int | None = None) -> str:
    timestamp = int(time.time()) if timestamp is None else timestamp
    return f"t={timestamp},v1={compute_signature(body=body, timestamp=timestamp, secret=secret)}"


def verify_signature(*, body: bytes, header: str | None, secret: str, tolerance: int) -> None:
    if not header:
        raise WebhookSignatureInvalid(f"Missing {SIGNATURE_HEADER} header.")
    if not header.isascii():
        raise WebhookSignatureInvalid(f"{SIGNATURE_HEADER} header is not ASCII.")
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        parts.setdefault(key, []).append(value)
    stamp = parts.get("t", [""])[0]
    if not (stamp.isdigit() and len(stamp) <= 12):
        raise WebhookSignatureInvalid("Signature header has no timestamp.")
    timestamp = int(stamp)
    expected = compute_signature(body=body, timestamp=timestamp, secret=secret).encode()
    # Bytes on both sides: compare_digest refuses str with non-ASCII characters (a 500).
    candidates = [value.encode("utf-8", "replace") for value in parts.get("v1", [])]
    if not any(hmac.compare_digest(expected, candidate) for candidate in candidates):
        raise WebhookSignatureInvalid("Signature does not match the body.")
    # Checked after the HMAC, so the timestamp itself is known to be authentic.
    if abs(time.time() - timestamp) > tolerance:
        raise WebhookSignatureInvalid(f"Signature timestamp is more than {tolerance} s old.")


# --- cards -------------------------------------------------------------------------------------


def normalize_card(card_number: str) -> str:
    return card_number.replace(" ", "").replace("-", "").strip()


def decline_code_for(card_number: str) -> str:
    """'' when the sandbox approves this card, else the decline code."""
    return TEST_CARDS.get(normalize_card(card_number), "incorrect_number")


# --- the provider's side -----------------------------------------------------------------------


def _event_payload(event_id: str, event_type: str, charge: SandboxCharge) -> dict[str, Any]:
    return {
        "id": event_id,
        "type": event_type,
        "created": int(time.time()),
        "data": {
            "charge": charge.id,
            "paymentId": charge.merchant_reference,
            "amount": str(charge.amount),
            "currency": charge.currency,
            "declineCode": charge.decline_code,
        },
    }


def _emit_outcome(charge: SandboxCharge) -> None:
    """Create the events announcing `charge`'s outcome and queue their delivery after commit."""
    events = _outcome_events(charge)
    if len(events) == 1:
        _EVENT_INSERT.bulk_create_one(events[0])  # the same statement, compiled once
    else:
        SandboxEvent.objects.bulk_create(events)
    _deliver_on_commit(events)


def _one_statement() -> bool:
    """Whether a charge and its one event go in one statement (`CompiledInsert.together`):
    on PostgreSQL, outside a transaction (where the two were a transaction of their own: a
    caller's transaction keeps the savepoint a refused charge needs), one event only."""
    return (
        settings.USES_POSTGRES
        and not transaction.get_connection().in_atomic_block
        and not sandbox_settings()["FAIL_AFTER_SUCCESS"]
    )


def _outcome_events(charge: SandboxCharge) -> list[SandboxEvent]:
    """The events announcing `charge`'s outcome, unsaved: one, or a failure after a success
    when the sandbox is set to send one."""
    cfg = sandbox_settings()
    now = timezone.now()
    kinds = [
        PAYMENT_SUCCEEDED if charge.status == SandboxChargeStatus.SUCCEEDED else PAYMENT_FAILED
    ]
    if kinds[0] == PAYMENT_SUCCEEDED and cfg["FAIL_AFTER_SUCCESS"]:
        kinds.append(PAYMENT_FAILED)  # out of order on purpose: a failure after the success
    events = []
    for kind in kinds:
        event_id = _new_id("evt")
        events.append(
            SandboxEvent(
                id=event_id,
                charge=charge,
                event_type=kind,
                payload=_event_payload(event_id, kind, charge),
                created_at=now,
                # Owed to our webhook (the relay queues it), or never: delivery is off.
                queued_at=None if sandbox_delivery.delivers() else now,
            )
        )
    return events


def _deliver_on_commit(events: list[SandboxEvent]) -> None:
    """The events' delivery, after commit: the relay that queues it is kicked
    (payments.gateways.sandbox_delivery; the rows themselves say they are owed)."""
    sandbox_delivery.kick_on_commit()


# `SandboxCharge.objects.create` and `SandboxEvent.objects.bulk_create([event])` without
# compiling their INSERTs for every charge (kernel.compiled_inserts).
_CHARGE_INSERT = CompiledInsert(SandboxCharge)
_EVENT_INSERT = CompiledInsert(SandboxEvent)


def complete_checkout(*, charge_id: str, card_number: str, approve: bool) -> SandboxCharge:
    """The customer's decision on the hosted checkout page."""
    decline = decline_code_for(card_number) if approve else "customer_declined"
    number = card_number.replace(" ", "")
    with transaction.atomic():
        won = SandboxCharge.objects.filter(
            pk=charge_id, status=SandboxChargeStatus.REQUIRES_ACTION
        ).update(
            status=SandboxChargeStatus.FAILED if decline else SandboxChargeStatus.SUCCEEDED,
            decline_code=decline,
            card_last4=number[-4:] if number.isdigit() else "",
        )
        charge = SandboxCharge.objects.get(pk=charge_id)
        if won:
            _emit_outcome(charge)
    return charge


# --- the merchant's side: the Gateway interface ------------------------------------------------


class SandboxGateway(Gateway):
    name = "sandbox"

    def accept_payment_method(self, payment_method: str) -> str:
        if not payment_method.strip():
            return ""
        number = normalize_card(payment_method)
        if number in TEST_CARDS:
            return number
        raise PaymentMethodRefused(
            "The sandbox takes only its test cards (see docs/payments.md), or no card for the "
            "hosted checkout; real card numbers are never accepted."
        )

    def create_payment(
        self,
        *,
        payment_id: int,
        amount: Decimal,
        currency: str,
        idempotency_key: str,
        payment_method: str = "",
        description: str = "",
        return_url: str = "",
    ) -> ChargeResult:
        decline = decline_code_for(payment_method) if payment_method else ""
        if not payment_method:
            status = SandboxChargeStatus.REQUIRES_ACTION
        else:
            status = SandboxChargeStatus.FAILED if decline else SandboxChargeStatus.SUCCEEDED
        number = payment_method.replace(" ", "")
        values = {
            "id": _new_id("ch"),
            "idempotency_key": idempotency_key,
            "merchant_reference": str(payment_id),
            "amount": amount,
            "currency": currency,
            "status": status,
            "decline_code": decline,
            "card_last4": number[-4:] if number.isdigit() else "",
        }
        try:
            if status != SandboxChargeStatus.REQUIRES_ACTION and _one_statement():
                charge = SandboxCharge(**values, created_at=timezone.now())
                events = _outcome_events(charge)
                _CHARGE_INSERT.together(charge, _EVENT_INSERT, events[0])
                _deliver_on_commit(events)
            else:
                with transaction.atomic():
                    charge = _CHARGE_INSERT.create(**values, created_at=timezone.now())
                    if status != SandboxChargeStatus.REQUIRES_ACTION:
                        _emit_outcome(charge)
        except IntegrityError:
            # Same outbound idempotency key: like a real provider, answer with the first charge.
            charge = SandboxCharge.objects.get(idempotency_key=idempotency_key)
        return self._result(charge)

    def cancel_payment(self, *, reference: str) -> ChargeResult:
        SandboxCharge.objects.filter(
            pk=reference, status=SandboxChargeStatus.REQUIRES_ACTION
        ).update(status=SandboxChargeStatus.CANCELED, decline_code="canceled")
        charge = SandboxCharge.objects.filter(pk=reference).first()
        if charge is None:
            return ChargeResult(status="failed", reference=reference, failure_reason="canceled")
        return self._result(charge)

    def reconcile(self, *, idempotency_key: str, **kwargs: Any) -> ChargeResult:
        """The provider's own ledger, by our key: the charge as it stands, or none at all."""
        charge = SandboxCharge.objects.filter(idempotency_key=idempotency_key).first()
        if charge is None:
            return ChargeResult(status="failed", reference="", failure_reason="gateway_unavailable")
        return self._result(charge)

    def _result(self, charge: SandboxCharge) -> ChargeResult:
        if charge.status == SandboxChargeStatus.REQUIRES_ACTION:
            url = reverse("payments:sandbox-checkout", args=[charge.id])
            return ChargeResult(status="requires_action", reference=charge.id, checkout_url=url)
        if charge.status == SandboxChargeStatus.CANCELED:
            return ChargeResult(status="failed", reference=charge.id, failure_reason="canceled")
        return ChargeResult(
            status=charge.status, reference=charge.id, failure_reason=charge.decline_code
        )

    def refund(
        self, *, reference: str, amount: Decimal, currency: str, idempotency_key: str
    ) -> RefundResult:
        existing = SandboxRefund.objects.filter(idempotency_key=idempotency_key).first()
        if existing:
            return RefundResult(succeeded=True, reference=existing.id)
        with transaction.atomic():
            won = SandboxCharge.objects.filter(
                pk=reference,
                status=SandboxChargeStatus.SUCCEEDED,
                currency=currency,
                refunded_amount__lte=F("amount") - amount,
            ).update(refunded_amount=F("refunded_amount") + amount)
            if not won:
                return RefundResult(succeeded=False, failure_reason="charge_not_refundable")
            refund = SandboxRefund.objects.create(
                id=_new_id("re"),
                charge_id=reference,
                idempotency_key=idempotency_key,
                amount=amount,
                created_at=timezone.now(),
            )
        return RefundResult(succeeded=True, reference=refund.id)

    def parse_webhook(self, *, body: bytes, headers: Mapping[str, str]) -> GatewayEvent:
        verify_signature(
            body=body,
            header=headers.get(SIGNATURE_HEADER),
            secret=sandbox_settings()["WEBHOOK_SECRET"],
            tolerance=settings.PAYMENTS["WEBHOOK_TOLERANCE_SECONDS"],
        )
        try:
            payload = json.loads(body)
            data = payload.get("data") or {}
            return GatewayEvent(
                event_id=str(payload["id"]),
                kind=str(payload["type"]),
                reference=str(data.get("charge", "")),
                payment_id=int(data["paymentId"]) if data.get("paymentId") else None,
                amount=Decimal(data["amount"]) if data.get("amount") else None,
                currency=str(data.get("currency", "")),
                failure_reason=str(data.get("declineCode", "")),
                payload=payload,
            )
        except (ValueError, KeyError, TypeError, ArithmeticError):
            raise WebhookSignatureInvalid("Signed, but not a sandbox event.") from None

    def refusal(self, event: GatewayEvent) -> str:
        """A success is believed only for a charge this provider itself marked paid, for that
        payment and that amount: knowing the webhook secret is not enough to confirm a booking."""
        if event.kind != PAYMENT_SUCCEEDED:
            return ""
        charge = _CHARGE.first(charge_id=event.reference)
        if charge is None:
            return f"the sandbox has no charge {event.reference!r}"
        if charge.status != SandboxChargeStatus.SUCCEEDED:
            return f"sandbox charge {charge.pk} is {charge.status}, not paid"
        if event.payment_id is not None and charge.merchant_reference != str(event.payment_id):
            return f"sandbox charge {charge.pk} belongs to another payment"
        if event.amount is not None and (
            event.amount != charge.amount or event.currency.upper() != charge.currency
        ):
            return f"sandbox charge {charge.pk} is for {charge.amount} {charge.currency}"
        return ""


# Compiled once per connection (kernel.compiled): every success webhook reads its charge.
# `SandboxCharge.objects.filter(pk=...).first()` (the model's ordering, newest first), as
# tests/payments/test_webhook_compiled_reads.py compares.
_CHARGE = CompiledRead(
    SandboxCharge,
    lambda charge_id: SandboxCharge.objects.filter(pk=charge_id)[:1],
    charge_id=str,
)
