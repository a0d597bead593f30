"""Stripe, through the official SDK.

A payment is a PaymentIntent carrying our payment id in its metadata.  With a payment method
(a ``pm_...`` token from Stripe.js) it is confirmed at once; when the bank wants 3-D Secure the
answer carries the intent's client secret for Stripe.js.  Without a method we open a hosted
Checkout Session and send the customer to its URL.  Outcomes arrive as ``payment_intent.*``
webhooks (the session passes our payment id on to its intent's metadata).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings

from payments.currency import from_minor_units, to_minor_units
from payments.errors import GatewayError, PaymentMethodRefused, WebhookSignatureInvalid
from payments.gateways.base import (
    PAYMENT_FAILED,
    PAYMENT_SUCCEEDED,
    ChargeResult,
    Gateway,
    GatewayEvent,
    RefundResult,
)

if TYPE_CHECKING:
    import stripe

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "Stripe-Signature"
# A PaymentMethod id made by Stripe.js or the mobile SDKs: card data never reaches us.
PAYMENT_METHOD_ID = re.compile(r"pm_[A-Za-z0-9_]{1,96}")
EVENT_KINDS = {
    "payment_intent.succeeded": PAYMENT_SUCCEEDED,
    "payment_intent.payment_failed": PAYMENT_FAILED,
}


def _payment_id(metadata: Mapping) -> int | None:
    """Our payment id from an intent's metadata; None (look it up by reference) when it is
    missing or not a number.  Metadata is free text anyone with the dashboard can edit: a bad
    value is logged and never a 500."""
    raw = metadata.get("payment_id")
    if raw in (None, ""):
        return None
    text = str(raw).strip()
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    log.warning("Stripe intent metadata payment_id %r is not one of our ids", str(raw)[:40])
    return None


def _amount(value: object, currency: str) -> Decimal | None:
    """The intent's amount in major units, exact; None when it is not an integer (the event
    then matches no payment's amount and is not applied)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return from_minor_units(value, currency)


def _sdk():
    """Stripe's SDK, imported when a Stripe gateway is first made or meets an error: with
    what it loads (httpx, rich) it is ~14 MB of every web process, most of which never talk
    to Stripe (issue 26, the web RSS)."""
    import stripe

    return stripe


class StripeGateway(Gateway):
    name = "stripe"

    def __init__(self, http_client: stripe.HTTPClient | None = None) -> None:
        cfg = settings.STRIPE
        # Tests (and anyone wanting custom transport) replace the SDK's HTTP client.
        self.client = _sdk().StripeClient(
            cfg["API_KEY"] or "sk_test_unset",
            http_client=http_client or cfg.get("HTTP_CLIENT"),
            max_network_retries=cfg["MAX_NETWORK_RETRIES"],
        )
        self.webhook_secret = cfg["WEBHOOK_SECRET"]

    def accept_payment_method(self, payment_method: str) -> str:
        method = payment_method.strip()
        if not method or PAYMENT_METHOD_ID.fullmatch(method):
            return method
        raise PaymentMethodRefused(
            "Send a Stripe PaymentMethod id (pm_...), created with Stripe.js; card numbers "
            "are never accepted here."
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
        if not payment_method:
            return self._checkout_session(
                payment_id=payment_id,
                amount=amount,
                currency=currency,
                idempotency_key=idempotency_key,
                description=description,
                return_url=return_url,
            )
        params: dict = {
            "amount": to_minor_units(amount, currency),
            "currency": currency.lower(),
            "description": description,
            "metadata": {"payment_id": str(payment_id)},
        }
        params.update(
            payment_method=payment_method,
            confirm=True,
            automatic_payment_methods={"enabled": True, "allow_redirects": "never"},
        )
        try:
            intent = self.client.v1.payment_intents.create(
                params=params, options={"idempotency_key": idempotency_key}
            )
        except _sdk().CardError as exc:
            intent = exc.error and getattr(exc.error, "payment_intent", None)
            intent_id = getattr(intent, "id", "") if intent else ""
            return ChargeResult(
                status="failed", reference=intent_id, failure_reason=exc.code or "card_declined"
            )
        except _sdk().StripeError as exc:
            raise GatewayError(str(exc)) from exc
        if intent.status == "succeeded":
            return ChargeResult(status="succeeded", reference=intent.id)
        if intent.status in {"canceled", "requires_payment_method"}:
            return ChargeResult(status="failed", reference=intent.id, failure_reason=intent.status)
        return self._waiting(intent)

    @staticmethod
    def _waiting(intent) -> ChargeResult:
        """An intent the customer must act on: Stripe.js needs the client secret; a redirect
        next action (if the bank asks for one) also gives a URL the page can send them to."""
        data = intent.to_dict()
        next_action = data.get("next_action") or {}
        url = (next_action.get("redirect_to_url") or {}).get("url") or ""
        return ChargeResult(
            status="requires_action",
            reference=intent.id,
            checkout_url=url,
            client_secret=data.get("client_secret") or "",
        )

    def _checkout_session(
        self,
        *,
        payment_id: int,
        amount: Decimal,
        currency: str,
        idempotency_key: str,
        description: str,
        return_url: str,
    ) -> ChargeResult:
        metadata = {"payment_id": str(payment_id)}
        params = {
            "mode": "payment",
            "client_reference_id": str(payment_id),
            "line_items": [
                {
                    "quantity": 1,
                    "price_data": {
                        "currency": currency.lower(),
                        "unit_amount": to_minor_units(amount, currency),
                        "product_data": {"name": description or f"Payment {payment_id}"},
                    },
                }
            ],
            "metadata": metadata,
            "payment_intent_data": {"metadata": metadata, "description": description},
            "success_url": return_url,
            "cancel_url": return_url,
        }
        try:
            session = self.client.v1.checkout.sessions.create(
                params=params, options={"idempotency_key": idempotency_key}
            )
        except _sdk().StripeError as exc:
            raise GatewayError(str(exc)) from exc
        if getattr(session, "payment_status", "") == "paid":
            return ChargeResult(status="succeeded", reference=str(session.payment_intent))
        return ChargeResult(
            status="requires_action", reference=session.id, checkout_url=session.url
        )

    def cancel_payment(self, *, reference: str) -> ChargeResult:
        """Expire the Checkout Session / cancel the PaymentIntent; when Stripe refuses because
        the customer already paid, read it back and say so."""
        try:
            if reference.startswith("cs_"):
                # Not expirable any more (paid, or already expired): read where it ended.
                with contextlib.suppress(_sdk().InvalidRequestError):
                    self.client.v1.checkout.sessions.expire(reference)
                session = self.client.v1.checkout.sessions.retrieve(reference)
                if session.payment_status == "paid":
                    return ChargeResult(status="succeeded", reference=str(session.payment_intent))
                if session.status == "expired":
                    return ChargeResult(
                        status="failed", reference=reference, failure_reason="canceled"
                    )
                raise GatewayError(f"Checkout Session {reference} is {session.status}.")
            with contextlib.suppress(_sdk().InvalidRequestError):
                self.client.v1.payment_intents.cancel(reference)
            intent = self.client.v1.payment_intents.retrieve(reference)
        except _sdk().StripeError as exc:
            raise GatewayError(str(exc)) from exc
        if intent.status == "succeeded":
            return ChargeResult(status="succeeded", reference=intent.id)
        if intent.status == "canceled":
            return ChargeResult(status="failed", reference=intent.id, failure_reason="canceled")
        raise GatewayError(f"PaymentIntent {reference} is {intent.status}.")

    def storable_method(self, payment_method: str) -> str:
        return payment_method if PAYMENT_METHOD_ID.fullmatch(payment_method) else ""

    def refund(
        self, *, reference: str, amount: Decimal, currency: str, idempotency_key: str
    ) -> RefundResult:
        try:
            refund = self.client.v1.refunds.create(
                params={"payment_intent": reference, "amount": to_minor_units(amount, currency)},
                options={"idempotency_key": idempotency_key},
            )
        except _sdk().StripeError as exc:
            raise GatewayError(str(exc)) from exc
        if refund.status in {"succeeded", "pending"}:
            return RefundResult(succeeded=True, reference=refund.id)
        return RefundResult(
            succeeded=False, reference=refund.id, failure_reason=refund.status or ""
        )

    def parse_webhook(self, *, body: bytes, headers: Mapping[str, str]) -> GatewayEvent:
        header = headers.get(SIGNATURE_HEADER)
        if not header:
            raise WebhookSignatureInvalid(f"Missing {SIGNATURE_HEADER} header.")
        if not header.isascii():
            # The SDK compares str digests, which raises on non-ASCII (an unauthenticated 500).
            raise WebhookSignatureInvalid(f"{SIGNATURE_HEADER} header is not ASCII.")
        try:
            event = _sdk().Webhook.construct_event(
                body.decode(),
                header,
                self.webhook_secret,
                tolerance=settings.PAYMENTS["WEBHOOK_TOLERANCE_SECONDS"],
            )
        except _sdk().SignatureVerificationError as exc:
            raise WebhookSignatureInvalid(str(exc.user_message or exc)) from None
        except ValueError:
            raise WebhookSignatureInvalid("Signed, but not a Stripe event.") from None
        kind = EVENT_KINDS.get(event.type, event.type)
        payload = event.to_dict()
        intent = payload.get("data", {}).get("object", {})
        if intent.get("object") != "payment_intent":
            return GatewayEvent(event_id=event.id, kind=kind, payload=payload)
        metadata = intent.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        currency = str(intent.get("currency", "")).upper()
        error = intent.get("last_payment_error") or {}
        return GatewayEvent(
            event_id=event.id,
            kind=kind,
            reference=intent["id"],
            payment_id=_payment_id(metadata),
            amount=_amount(intent.get("amount"), currency),
            currency=currency,
            failure_reason=str(error.get("code") or ""),
            payload=payload,
        )
