"""A pay request's body, read: `PayRequestSerializer`'s validated data, with a quick path for
the body almost every client sends (`{"paymentMethod": "..."}`).

`PayRequestSerializer.is_valid` was about 360 of a pay request's Python calls (77 µs), most
of them DRF's per-instance deep copy of the declared fields (docs/performance.md, "Issue 26:
fewer Python calls per hold, loser and pay").  `pay_request` first tries `_quick`, which
accepts only a body that is plainly valid: a dict with no key but `payment_method`, its value
a string the CharField keeps unchanged (already stripped, printable: no NUL, no surrogate; at
most 100 characters; blank allowed).  Anything else (an amount or a currency to check, a
number, a padded or over-long string, a list) goes through the serializer, so every error
stays the serializer's, byte for byte.

tests/payments/test_pay_input.py proves the two equal over random bodies, valid and invalid,
and shows quick paths wrong in one detail are caught.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from kernel.web.quick_input import validated

_METHOD_LENGTH = 100


class PayRequestSerializer(serializers.Serializer):
    amount = serializers.DecimalField(
        max_digits=12,
        decimal_places=2,
        min_value=0,
        required=False,
        help_text="Optional check: refused (400) unless it is the booking's amount.",
    )
    currency = serializers.RegexField(r"^[A-Za-z]{3}$", required=False)
    payment_method = serializers.CharField(
        max_length=_METHOD_LENGTH,
        required=False,
        allow_blank=True,
        help_text="Sandbox: one of its documented test card numbers; Stripe: a PaymentMethod "
        "id (pm_...), never a card number (400). "
        "Omit it for the hosted checkout (202 with `checkoutUrl`).",
    )


def pay_request(data: Any) -> dict[str, Any]:
    """`PayRequestSerializer(data=data)`'s validated data, or its ValidationError."""
    return validated(data, quick=_quick, serializer_class=PayRequestSerializer)


def _quick(data: Any) -> dict[str, Any] | None:
    """The validated data of a plainly valid body; None for anything else."""
    if type(data) is not dict or len(data) > 1:
        return None
    if not data:
        return {}
    method = data.get("payment_method")
    if (
        type(method) is not str
        or len(method) > _METHOD_LENGTH
        or method.strip() != method
        or not method.isprintable()
    ):
        return None
    return {"payment_method": method}
