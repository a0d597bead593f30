"""Admission tokens: HMAC-SHA256 over (waiting room, customer, expiry), checked without Redis or the
database, so an admitted shopper keeps shopping while Redis is down.

Format: `wr1.<room id>.<customer id>.<expiry, unix seconds>.<base64url signature>`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.utils.translation import gettext

VERSION = "wr1"


@dataclass(frozen=True)
class TokenClaims:
    room_id: int
    customer_id: int
    expires_at: datetime


def _signature(message: str) -> str:
    key = settings.WAITING_ROOM["SIGNING_KEY"].encode()
    digest = hmac.new(key, message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue_token(*, room_id: int, customer_id: int, expires_at: datetime) -> str:
    message = f"{VERSION}.{room_id}.{customer_id}.{int(expires_at.timestamp())}"
    return f"{message}.{_signature(message)}"


def read_token(token: str | None) -> TokenClaims | None:
    """The claims of a token we signed, or None (malformed or forged).  Expiry and binding
    are the caller's to check (`check_token`)."""
    # Everything we sign is ASCII; anything else is forged.  (compare_digest raises on
    # non-ASCII text, and int() would read other scripts' digits.)
    if not token or len(token) > 200 or not token.isascii():
        return None
    parts = token.split(".")
    if len(parts) != 5 or parts[0] != VERSION:
        return None
    message, signature = ".".join(parts[:4]), parts[4]
    if not hmac.compare_digest(signature.encode(), _signature(message).encode()):
        return None
    try:
        room_id, customer_id, expiry = int(parts[1]), int(parts[2]), int(parts[3])
        expires_at = datetime.fromtimestamp(expiry, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return TokenClaims(room_id, customer_id, expires_at)


def check_token(
    token: str | None, *, room_id: int, customer_id: int, now: datetime
) -> tuple[bool, str]:
    """(valid, reason a person can read)."""
    claims = read_token(token)
    if token is None or token == "":
        return False, gettext("you have no admission token for it.")
    if claims is None:
        return False, gettext("your admission token is not valid.")
    if claims.room_id != room_id:
        return False, gettext("your admission token is for another sale.")
    if claims.customer_id != customer_id:
        return False, gettext("your admission token belongs to another customer.")
    if claims.expires_at <= now:
        return False, gettext("your admission time is over.")
    return True, ""
