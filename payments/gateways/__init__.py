"""Payment gateways, one interface, chosen by `settings.PAYMENTS["GATEWAY"]`."""

from __future__ import annotations

from django.conf import settings

from payments.gateways.base import Gateway


def gateway_names() -> tuple[str, ...]:
    return ("sandbox", "stripe")


def enabled_gateway_names() -> tuple[str, ...]:
    """The gateways whose routes (webhooks, the sandbox's checkout page) exist.

    The selected one, and Stripe whenever its webhook secret is configured (payments started
    before a switch of gateway still get their outcome).  The sandbox only when selected: its
    pages and webhook must not exist beside a real gateway."""
    selected = settings.PAYMENTS["GATEWAY"]
    names = [selected]
    if selected != "stripe" and settings.STRIPE.get("WEBHOOK_SECRET"):
        names.append("stripe")
    return tuple(name for name in names if name in gateway_names())


def sandbox_enabled() -> bool:
    return "sandbox" in enabled_gateway_names()


def get_gateway(name: str | None = None) -> Gateway:
    name = name or settings.PAYMENTS["GATEWAY"]
    if name == "sandbox":
        from payments.gateways.sandbox import SandboxGateway

        return SandboxGateway()
    if name == "stripe":
        from payments.gateways.stripe import StripeGateway

        return StripeGateway()
    raise ValueError(f"Unknown payment gateway {name!r}; expected one of {gateway_names()}.")
