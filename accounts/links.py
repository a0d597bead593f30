"""The e-mail verification link: signed (SECRET_KEY, its own salt) and expiring.

The signed value names the account and the address the link was sent to, so a link proves
only that address: one sent before the account's address changed verifies nothing.  No row
is needed to check it, and opening it twice is harmless (verifying is idempotent)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core import signing

SALT = "accounts.email-verification"


@dataclass(frozen=True)
class VerificationClaim:
    user_id: int
    email: str


def make_token(*, user_id: int, email: str) -> str:
    return signing.dumps({"u": user_id, "e": email}, salt=SALT)


def read_token(token: str) -> VerificationClaim | None:
    """The claim of a genuine link opened in time; None for a forged, altered or old one."""
    max_age = settings.ACCOUNTS["VERIFICATION_LINK_MAX_AGE"]
    try:
        value = signing.loads(token, salt=SALT, max_age=max_age)
    except signing.BadSignature:  # SignatureExpired is one
        return None
    if not isinstance(value, dict):
        return None
    user_id, email = value.get("u"), value.get("e")
    if not isinstance(user_id, int) or not isinstance(email, str) or not email:
        return None
    return VerificationClaim(user_id=user_id, email=email)
