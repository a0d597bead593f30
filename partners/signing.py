"""How our webhooks are signed: exactly like the sandbox's incoming ones (`t=…,v1=…`), so a
partner verifies HMAC-SHA256 over "<t>.<body>" with the endpoint's secret."""

from __future__ import annotations

import time

from payments.gateways.sandbox import compute_signature, signature_header, verify_signature

SIGNATURE_HEADER = "Seatkeeper-Signature"
EVENT_ID_HEADER = "Seatkeeper-Event-Id"
EVENT_TYPE_HEADER = "Seatkeeper-Event-Type"
ATTEMPT_HEADER = "Seatkeeper-Delivery-Attempt"


def signatures_header(*, body: bytes, secrets: list[str], timestamp: int | None = None) -> str:
    """`t=…,v1=…[,v1=…]`: one v1 entry per live secret (as Stripe signs during a secret's
    rotation), so a partner verifying with either the old or the new secret accepts it."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    entries = ",".join(
        f"v1={compute_signature(body=body, timestamp=timestamp, secret=s)}" for s in secrets
    )
    return f"t={timestamp},{entries}"


__all__ = [
    "ATTEMPT_HEADER",
    "EVENT_ID_HEADER",
    "EVENT_TYPE_HEADER",
    "SIGNATURE_HEADER",
    "compute_signature",
    "signature_header",
    "signatures_header",
    "verify_signature",
]
