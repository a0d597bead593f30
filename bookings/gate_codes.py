"""Rotating ticket codes that a gate verifies with public keys alone (Ed25519).

Pure Python on `cryptography`, no Django: the server's gate and the reference offline gate
client (`bookings.gate_offline`) run this same verifier.

* Each sale has a signing key (derived on the server, never sent anywhere; see
  `bookings.gate_keys`).  Its public key is what a gate downloads.
* Each ticket has its own key pair.  The sale's key **certifies** the ticket's public key:
  `<payload>.<signature>`, the payload being base64url JSON
  `{"v":1,"k":sale key id,"c":certificate id,"e":sale id,"s":serial,"p":ticket public key,
  "n":seat,"f":class,"h":holder's name}`.
* The code on the ticket page is `SKR1.<certificate>.<step>.<signature>`: the current time
  step (`floor(unix time / STEP_SECONDS)`) signed with the ticket's key.  It changes every
  step; a gate accepts only steps within `skew_steps` of its own clock's step, so a
  screenshot stops working after at most `(skew_steps + 1) * STEP_SECONDS` seconds.

Every check is on the bytes as transmitted: the certificate's signature covers its payload
text, the step signature covers `SKR1.<certificate>.<step>`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ROTATING_PREFIX = "SKR1"
STEP_SECONDS = 15
SKEW_STEPS = 1  # accept the previous, the current and the next step of the verifier's clock
CERT_VERSION = 1


class BadGateCode(Exception):
    """Not a rotating code, or its certificate or signature does not verify."""

    outcome = "forged"


class StaleGateCode(BadGateCode):
    """Signed correctly, but for a time step outside the window: a screenshot, or a phone
    whose clock is far off."""

    outcome = "expired_code"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def raw_public_key(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def public_key_from_raw(data: bytes) -> Ed25519PublicKey:
    if len(data) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(data)


def private_key_from_seed(seed: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(seed[:32])


@dataclass(frozen=True)
class Certificate:
    key_id: str  # which sale key signed it
    cert_id: str  # one per certified ticket key; superseded ids are in the revocation list
    sale_id: int
    serial: str  # the ticket's
    public_key: bytes  # the ticket's, raw 32 bytes
    seat_no: str
    fare_class: str
    holder: str


def sign_certificate(cert: Certificate, sale_key: Ed25519PrivateKey) -> str:
    payload = json.dumps(
        {
            "v": CERT_VERSION,
            "k": cert.key_id,
            "c": cert.cert_id,
            "e": cert.sale_id,
            "s": cert.serial,
            "p": b64(cert.public_key),
            "n": cert.seat_no,
            "f": cert.fare_class,
            "h": cert.holder,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )
    body = b64(payload.encode())
    return f"{body}.{b64(sale_key.sign(body.encode('ascii')))}"


def verify_certificate(text: str, sale_keys: dict[str, Ed25519PublicKey]) -> Certificate:
    """The certificate's content if a sale key in `sale_keys` (key id -> public key) signed
    it, else BadGateCode."""
    try:
        body, signature = text.split(".")
        data = json.loads(unb64(body))
        key = sale_keys[data["k"]]
        key.verify(unb64(signature), body.encode("ascii"))
    except (ValueError, KeyError, TypeError, InvalidSignature) as exc:
        raise BadGateCode("certificate not signed by this sale's key") from exc
    try:
        if data["v"] != CERT_VERSION:
            raise ValueError("unknown certificate version")
        return Certificate(
            key_id=str(data["k"]),
            cert_id=str(data["c"]),
            sale_id=int(data["e"]),
            serial=str(data["s"]),
            public_key=unb64(data["p"]),
            seat_no=str(data["n"]),
            fare_class=str(data["f"]),
            holder=str(data["h"]),
        )
    except (ValueError, KeyError, TypeError) as exc:  # signed by us, so only a bug gets here
        raise BadGateCode("unreadable certificate") from exc


def step_at(unix_time: float, step_seconds: int = STEP_SECONDS) -> int:
    return int(unix_time // step_seconds)


def step_message(certificate: str, step: int) -> bytes:
    """What the ticket's key signs: the prefix, the certificate and the step, as sent."""
    return f"{ROTATING_PREFIX}.{certificate}.{step}".encode("ascii")


def rotating_code(certificate: str, step: int, ticket_key: Ed25519PrivateKey) -> str:
    signature = ticket_key.sign(step_message(certificate, step))
    return f"{ROTATING_PREFIX}.{certificate}.{step}.{b64(signature)}"


def is_rotating_code(code: str) -> bool:
    return code.strip().startswith(ROTATING_PREFIX + ".")


@dataclass(frozen=True)
class VerifiedCode:
    certificate: Certificate
    step: int


def verify_rotating_code(
    code: str,
    *,
    sale_keys: dict[str, Ed25519PublicKey],
    now: float,
    skew_steps: int = SKEW_STEPS,
    step_seconds: int = STEP_SECONDS,
) -> VerifiedCode:
    """Check a rotating code with the sale's public keys alone, at the verifier's unix time
    `now`.  BadGateCode if anything is forged, StaleGateCode if the step is outside
    `now`'s step ± `skew_steps`."""
    try:
        prefix, cert_body, cert_sig, step_text, signature = code.strip().split(".")
    except ValueError as exc:
        raise BadGateCode("not a rotating ticket code") from exc
    if prefix != ROTATING_PREFIX or not step_text.isascii() or not step_text.isdigit():
        raise BadGateCode("not a rotating ticket code")
    certificate = f"{cert_body}.{cert_sig}"
    cert = verify_certificate(certificate, sale_keys)
    step = int(step_text[:20])
    try:
        public_key_from_raw(cert.public_key).verify(
            unb64(signature), step_message(certificate, step)
        )
    except (ValueError, InvalidSignature) as exc:
        raise BadGateCode("step not signed by the certified ticket key") from exc
    if abs(step - step_at(now, step_seconds)) > skew_steps:
        raise StaleGateCode("the code is from another time step")
    return VerifiedCode(cert, step)


def static_code_digest(code: str) -> str:
    """How a gate bundle lists a printed (static, HMAC-signed) code: a digest from which the
    code cannot be recovered, so the bundle mints nothing.  128 bits are plenty against a
    preimage search."""
    return hashlib.sha256(code.strip().encode("ascii", "replace")).hexdigest()[:32]
