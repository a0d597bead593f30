"""Payment gateways: the built-in sandbox and Stripe (docs/payments.md)."""

from datetime import timedelta

from config.settings.environment import env
from config.settings.security import SECRET_KEY

# --- Payments -------------------------------------------------------------------------------
# The gateway is chosen here; "sandbox" is the built-in simulated provider (demo and tests).
PAYMENTS = {
    "GATEWAY": env("PAYMENTS_GATEWAY", default="sandbox"),
    # The simulated gateway with DEBUG off is refused at start-up unless a demo says so.
    "SANDBOX_IN_PRODUCTION": env.bool("PAYMENTS_SANDBOX_IN_PRODUCTION", default=False),
    # Keys the HMAC that fingerprints a pay request (Idempotency-Key reuse detection), so
    # the stored fingerprint reveals nothing about the request, card numbers included.
    "FINGERPRINT_KEY": env("PAYMENTS_FINGERPRINT_KEY", default=f"payment-fingerprint:{SECRET_KEY}"),
    # A payment still PROCESSING (a crash between recording and applying the gateway's
    # answer) this long after its last change is reconciled with the gateway by a beat job.
    "RECONCILE_AFTER": timedelta(seconds=env.int("PAYMENTS_RECONCILE_AFTER_SECONDS", default=120)),
    # Idempotency keys are kept at least 24 h (see docs/payments.md); then purged.
    "IDEMPOTENCY_KEY_RETENTION": timedelta(
        hours=env.int("PAYMENTS_IDEMPOTENCY_KEY_HOURS", default=48)
    ),
    "WEBHOOK_TOLERANCE_SECONDS": 300,
    # The webhook waits at most this long for a booking lock, then answers 503 so the
    # gateway retries, instead of tying up a worker.
    "WEBHOOK_LOCK_TIMEOUT_MS": env.int("PAYMENTS_WEBHOOK_LOCK_TIMEOUT_MS", default=2_000),
    "REFUND_MAX_RETRIES": 8,
}
DEV_SANDBOX_WEBHOOK_SECRET = "whsec_sandbox_local_only"
PAYMENTS_SANDBOX = {
    "WEBHOOK_URL": env("SANDBOX_WEBHOOK_URL", default="http://127.0.0.1:8000/api/payments/webhook"),
    "WEBHOOK_SECRET": env("SANDBOX_WEBHOOK_SECRET", default=DEV_SANDBOX_WEBHOOK_SECRET),
    "DELIVER_WEBHOOKS": env.bool("SANDBOX_DELIVER_WEBHOOKS", default=True),
    "TIMEOUT_SECONDS": 5,
    "MAX_RETRIES": env.int("SANDBOX_WEBHOOK_MAX_RETRIES", default=8),
    "BACKOFF_BASE_SECONDS": 2,
    "BACKOFF_MAX_SECONDS": 600,
    # Misbehaviour on purpose: extra copies of every delivery, a delay before delivering,
    # and a "payment.failed" event sent after each success.
    "DUPLICATE_DELIVERIES": env.int("SANDBOX_DUPLICATE_DELIVERIES", default=0),
    "DELAY_SECONDS": env.int("SANDBOX_DELAY_SECONDS", default=0),
    "FAIL_AFTER_SUCCESS": env.bool("SANDBOX_FAIL_AFTER_SUCCESS", default=False),
}
STRIPE = {
    "API_KEY": env("STRIPE_API_KEY", default=""),
    "WEBHOOK_SECRET": env("STRIPE_WEBHOOK_SECRET", default=""),
    "MAX_NETWORK_RETRIES": 2,
}
