"""Partners: outgoing webhooks and the key that seals their signing secrets."""

from config.settings.environment import DEBUG, env
from config.settings.security import SECRET_KEY

# --- Partners: outgoing webhooks (docs/operations.md) --------------------------------------
PARTNER_WEBHOOKS = {
    "TIMEOUT_SECONDS": env.float("PARTNER_WEBHOOK_TIMEOUT_SECONDS", default=5),
    "MAX_ATTEMPTS": env.int("PARTNER_WEBHOOK_MAX_ATTEMPTS", default=12),
    # Attempt n waits BASE * 2**(n-1) seconds, at most MAX.
    "BACKOFF_BASE_SECONDS": env.float("PARTNER_WEBHOOK_BACKOFF_BASE_SECONDS", default=10),
    "BACKOFF_MAX_SECONDS": env.float("PARTNER_WEBHOOK_BACKOFF_MAX_SECONDS", default=3600),
    # A delivery SENDING this long is taken as abandoned (its worker died) and sent again.
    "STALE_AFTER_SECONDS": env.float("PARTNER_WEBHOOK_STALE_AFTER_SECONDS", default=120),
    # Endpoints on loopback/private addresses: only for dev and tests.
    "ALLOW_PRIVATE_URLS": env.bool("PARTNER_WEBHOOK_ALLOW_PRIVATE_URLS", default=DEBUG),
    # The CA certificates partners' TLS certificates are checked against (a PEM file); empty:
    # the public roots shipped with certifi.  Never read from the environment at send time
    # (REQUESTS_CA_BUNDLE is ignored: the sending session does not trust the environment).
    "CA_BUNDLE": env.str("PARTNER_WEBHOOK_CA_BUNDLE", default=""),
    # After a secret rotation the previous secret signs too, this long.
    "SECRET_OVERLAP_HOURS": env.float("PARTNER_WEBHOOK_SECRET_OVERLAP_HOURS", default=24),
}
# Seals partner signing secrets at rest (partners/secret_box.py).  Production sets its own;
# the default derives from SECRET_KEY (refused with DEBUG off, config/checks.py).
DEV_PARTNER_SECRETS_KEY = f"partner-secrets:{SECRET_KEY}"
PARTNER_SECRETS_KEY = env("PARTNER_SECRETS_KEY", default=DEV_PARTNER_SECRETS_KEY)
