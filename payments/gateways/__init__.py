"""Payment gateways, one interface, chosen by `settings.PAYMENTS["GATEWAY"]`."""

from __future__ import annotations

from django.conf import settings

from payments.gateways.base import Gateway


def gateway_names() -> tuple[str, ...]:
    return ("sandbox", "stripe")


def get_gateway(name: str | None = None) -> Gateway:
    name = name or settings.PAYMENTS["GATEWAY"]
    if name == "sandbox":
        from payments.gateways.sandbox import SandboxGateway

        return SandboxGateway()
    if name == "stripe":
        from payments.gateways.stripe import StripeGateway

        return StripeGateway()
    raise ValueError(f"Unknown payment gateway {name!r}; expected one of {gateway_names()}.")
