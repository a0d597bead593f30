"""The one interface every payment gateway implements.

Calls on a gateway go over the network: callers make them outside any database transaction
and hold no row locks while they wait (see payments.charging)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

ChargeStatus = Literal["succeeded", "failed", "requires_action"]

# Event kinds our webhook handler understands; everything else is recorded and acknowledged.
PAYMENT_SUCCEEDED = "payment.succeeded"
PAYMENT_FAILED = "payment.failed"


@dataclass(frozen=True)
class ChargeResult:
    status: ChargeStatus
    reference: str
    checkout_url: str = ""
    failure_reason: str = ""
    # For Stripe.js (3-D Secure and other next actions), when the gateway has one.
    client_secret: str = ""


@dataclass(frozen=True)
class RefundResult:
    succeeded: bool
    reference: str = ""
    failure_reason: str = ""


@dataclass(frozen=True)
class GatewayEvent:
    event_id: str
    kind: str
    reference: str = ""
    payment_id: int | None = None
    amount: Decimal | None = None
    currency: str = ""
    failure_reason: str = ""
    payload: dict[str, Any] = field(default_factory=dict)


class Gateway(ABC):
    name: str

    @abstractmethod
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
        """Charge (or start charging) the customer.  `idempotency_key` goes on the outbound
        call, so retrying the same payment never charges twice at the provider.  Without a
        payment method the answer is "requires_action" with a hosted `checkout_url` that sends
        the customer back to `return_url`."""

    @abstractmethod
    def cancel_payment(self, *, reference: str) -> ChargeResult:
        """Abandon a charge still waiting for the customer, so it can never be paid later.

        Answers where the charge ended: "failed" (canceled: nothing was or will be taken) or
        "succeeded" (the customer paid first).  Raises GatewayError when that is unknown."""

    def reconcile(
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
        """Where a charge whose answer we lost (a crash) stands, found by our idempotency key.

        By default the original call is repeated with the same key and parameters: the
        provider answers with the charge it already made, or makes it now, never a second."""
        return self.create_payment(
            payment_id=payment_id,
            amount=amount,
            currency=currency,
            idempotency_key=idempotency_key,
            payment_method=payment_method,
            description=description,
            return_url=return_url,
        )

    def storable_method(self, payment_method: str) -> str:
        """What of the payment method may be kept for `reconcile`: a token, never a card."""
        return ""

    @abstractmethod
    def refund(
        self, *, reference: str, amount: Decimal, currency: str, idempotency_key: str
    ) -> RefundResult:
        """Pay `amount` of the charge `reference` back."""

    @abstractmethod
    def parse_webhook(self, *, body: bytes, headers: Mapping[str, str]) -> GatewayEvent:
        """Verify the signature and freshness of a webhook; raise WebhookSignatureInvalid."""

    @abstractmethod
    def accept_payment_method(self, payment_method: str) -> str:
        """The method in the form this gateway takes it, or PaymentMethodRefused (400).

        '' means "no method: send the customer to the hosted checkout"."""

    def refusal(self, event: GatewayEvent) -> str:
        """Why a correctly signed event must still not be applied ('' to apply it).

        A signature proves who knows the secret, not that the money moved; a gateway that can
        check its own records cheaply says here when an event contradicts them."""
        return ""
