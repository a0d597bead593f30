"""How much of each currency a charge can carry: Stripe's own rules, the one table every
money path asks (the Stripe gateway's minor units, the catalogues' price check, refund
rounding).  Source: Stripe, "Supported currencies" (https://docs.stripe.com/currencies),
sections "Zero-decimal currencies", "Three-decimal currencies" and "Special cases".

Not ISO 4217 or CLDR/Babel: they disagree with Stripe for HUF, ISK, IDR and COP, and Stripe
is who charges the card.  The sandbox gateway follows the same table, so what a test or a demo
accepts is what production can charge.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

# Amounts are whole units, sent as is (¥500 is 500).
ZERO_DECIMAL = frozenset(
    {
        "BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA",
        "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF",
    }
)  # fmt: skip
# Sent times 1000, and the last digit must be 0: 5.124 KWD cannot be charged, 5.120 can.
THREE_DECIMAL = frozenset({"BHD", "JOD", "KWD", "OMR", "TND"})
# ISK: zero-decimal, but for backwards compatibility sent times 100 with "00" as the decimals
# (5 ISK is 500): whole krónur only.
ZERO_DECIMAL_SENT_AS_TWO = frozenset({"ISK"})
# HUF and TWD are zero-decimal for payouts only; charges take two decimals (times 100).  UGX is in
# the zero-decimal list above: whole shillings, sent as is.


@dataclass(frozen=True)
class CurrencyRule:
    """`factor`: major unit → the integer the API takes; `step`: the smallest amount that can
    be charged (every amount is a multiple of it)."""

    factor: int
    step: Decimal


def rule(currency: str) -> CurrencyRule:
    code = currency.upper()
    if code in ZERO_DECIMAL:
        return CurrencyRule(factor=1, step=Decimal("1"))
    if code in ZERO_DECIMAL_SENT_AS_TWO:
        return CurrencyRule(factor=100, step=Decimal("1"))
    if code in THREE_DECIMAL:
        return CurrencyRule(factor=1000, step=Decimal("0.01"))
    return CurrencyRule(factor=100, step=Decimal("0.01"))


class NotChargeable(ValueError):
    """An amount the gateway cannot charge exactly in its currency."""


def is_chargeable(amount: Decimal, currency: str) -> bool:
    return amount >= 0 and amount % rule(currency).step == 0


def check_chargeable(amount: Decimal, currency: str) -> None:
    """Raise NotChargeable, with a message for staff, unless `amount` is exact in `currency`."""
    if is_chargeable(amount, currency):
        return
    step = rule(currency).step
    unit = "whole units" if step == 1 else f"multiples of {step}"
    raise NotChargeable(
        f"{amount} {currency.upper()} cannot be charged exactly: the payment gateway takes "
        f"{currency.upper()} in {unit} only (e.g. {round_to_unit(amount, currency)})."
    )


def round_to_unit(amount: Decimal, currency: str) -> Decimal:
    """`amount` rounded (half up) to the smallest chargeable amount of `currency`; refund
    percentages go through here, so the refund is always an amount the gateway can pay."""
    step = rule(currency).step
    return (amount / step).quantize(Decimal("1"), rounding=ROUND_HALF_UP) * step


def to_minor_units(amount: Decimal, currency: str) -> int:
    """The integer the gateway's API takes; NotChargeable rather than a silent rounding."""
    check_chargeable(amount, currency)
    return int(amount * rule(currency).factor)


def from_minor_units(value: int, currency: str) -> Decimal:
    """The exact amount an API integer stands for: never rounded, so a webhook's amount is
    compared with ours as it is."""
    return Decimal(value) / rule(currency).factor
