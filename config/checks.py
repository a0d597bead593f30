"""Start-up refusals for an unsafe production configuration.

Error-level system checks run before `migrate`, `runserver`, `serve` and every other
management command, so a server with DEBUG off never starts on a secret that is in the
repository, or on the simulated payment gateway without a demo's explicit opt-in.  With DEBUG
on (development, `./scripts/run`) they stay silent.
"""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, Tags, register

MIN_SECRET_LENGTH = 32
MIN_DISTINCT_CHARACTERS = 8


def weak_secret(value: str, *, defaults: set[str]) -> str | None:
    """Why `value` is no secret (in the repository, a placeholder, too short), or None."""
    if not value:
        return "it is empty"
    if value in (f"ticket-signing:{settings.SECRET_KEY}", f"partner-secrets:{settings.SECRET_KEY}"):
        return "it is unset, so derived from DJANGO_SECRET_KEY; give it its own value"
    if value in defaults:
        return "it is a development default from the repository"
    if value.startswith("django-insecure"):
        return "it is marked django-insecure"
    if len(value) < MIN_SECRET_LENGTH or len(set(value)) < MIN_DISTINCT_CHARACTERS:
        return f"it is shorter than {MIN_SECRET_LENGTH} characters or too repetitive"
    return None


def _known_defaults() -> set[str]:
    return {
        getattr(settings, "DEV_SECRET_KEY", ""),
        getattr(settings, "DEV_SANDBOX_WEBHOOK_SECRET", ""),
        getattr(settings, "DEV_TICKET_SIGNING_KEY", ""),
        getattr(settings, "DEV_PARTNER_SECRETS_KEY", ""),
        # Secrets that appear in the repository's tests and docs.
        "whsec_test_secret",
        "whsec_sandbox_local_only",
    } - {""}


def _secrets_in_use() -> list[tuple[str, str]]:
    """(environment variable, value) of every secret the running configuration relies on."""
    found = [("DJANGO_SECRET_KEY", settings.SECRET_KEY)]
    current = getattr(settings, "TICKET_SIGNING_KEY_ID", "")
    for key_id, key in settings.TICKET_SIGNING_KEYS.items():
        name = "TICKET_SIGNING_KEY" if key_id == current else f"TICKET_SIGNING_OLD_KEYS[{key_id}]"
        found.append((name, key))
    found.append(("PARTNER_SECRETS_KEY", settings.PARTNER_SECRETS_KEY))
    from payments.gateways import enabled_gateway_names

    enabled = enabled_gateway_names()
    if "sandbox" in enabled:
        found.append(("SANDBOX_WEBHOOK_SECRET", settings.PAYMENTS_SANDBOX["WEBHOOK_SECRET"]))
    if "stripe" in enabled:
        found.append(("STRIPE_WEBHOOK_SECRET", settings.STRIPE["WEBHOOK_SECRET"]))
    if settings.PAYMENTS["GATEWAY"] == "stripe":
        found.append(("STRIPE_API_KEY", settings.STRIPE["API_KEY"]))
    return found


@register(Tags.security)
def check_production_secrets(app_configs=None, **kwargs) -> list[Error]:
    if settings.DEBUG:
        return []
    defaults = _known_defaults()
    errors = []
    for name, value in _secrets_in_use():
        reason = weak_secret(value, defaults=defaults)
        if reason:
            errors.append(
                Error(
                    f"{name} is not a production secret: {reason}.",
                    hint=f"Set {name} in the environment to a long random value "
                    "(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`), "
                    "or run with DJANGO_DEBUG=true for development.",
                    id="seatkeeper.E001",
                )
            )
    return errors


@register(Tags.security)
def check_sandbox_gateway(app_configs=None, **kwargs) -> list[Error]:
    if settings.DEBUG or settings.PAYMENTS["GATEWAY"] != "sandbox":
        return []
    if settings.PAYMENTS.get("SANDBOX_IN_PRODUCTION"):
        return []
    return [
        Error(
            "The payment gateway is the simulated sandbox while DEBUG is off: nobody would pay.",
            hint="Set PAYMENTS_GATEWAY=stripe (with STRIPE_API_KEY and STRIPE_WEBHOOK_SECRET), "
            "or, for a demo only, PAYMENTS_SANDBOX_IN_PRODUCTION=true.",
            id="seatkeeper.E002",
        )
    ]
