"""Error tracking with the Sentry SDK, switched on by SENTRY_DSN.  No DSN: never initialised,
nothing is sent anywhere.  Imported by settings, so it reads no Django settings itself."""

from __future__ import annotations

from typing import Any


def init_sentry(
    *,
    dsn: str,
    environment: str = "production",
    traces_sample_rate: float = 0.0,
    transport: Any = None,
) -> bool:
    """Initialise the SDK with the Django and Celery integrations; False when `dsn` is empty."""
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    options: dict[str, Any] = {
        "dsn": dsn,
        "environment": environment,
        "integrations": [DjangoIntegration(), CeleryIntegration()],
        "traces_sample_rate": traces_sample_rate,
        # Personal data stays here: no user details or cookies (send_default_pii left at its
        # default, off), no request bodies and no frame locals, which could hold passenger
        # names or card numbers.
        "max_request_body_size": "never",
        "include_local_variables": False,
    }
    if transport is not None:
        options["transport"] = transport
    sentry_sdk.init(**options)
    return True
