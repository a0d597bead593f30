"""How our webhooks are signed: exactly like the sandbox's incoming ones (`t=…,v1=…`), so a
partner verifies HMAC-SHA256 over "<t>.<body>" with the endpoint's secret."""

from __future__ import annotations

from payments.gateways.sandbox import compute_signature, signature_header, verify_signature

SIGNATURE_HEADER = "Seatkeeper-Signature"
EVENT_ID_HEADER = "Seatkeeper-Event-Id"
EVENT_TYPE_HEADER = "Seatkeeper-Event-Type"
ATTEMPT_HEADER = "Seatkeeper-Delivery-Attempt"

__all__ = [
    "ATTEMPT_HEADER",
    "EVENT_ID_HEADER",
    "EVENT_TYPE_HEADER",
    "SIGNATURE_HEADER",
    "compute_signature",
    "signature_header",
    "verify_signature",
]
