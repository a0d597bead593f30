"""The one interface every payment gateway implements.

Calls on a gateway go over the network: callers make them outside any database transaction
and hold no row locks while they wait (see payments.services)."""

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
    ) -> ChargeResult:
        """Charge (or start charging) the customer.  `idempotency_key` goes on the outbound
        call, so retrying the same payment never charges twice at the provider."""

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
