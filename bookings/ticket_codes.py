"""Ticket codes that cannot be forged: the ticket's content, signed with HMAC-SHA256.

A code reads `SK1.<key id>.<content>.<signature>`, where content is the base64url JSON of
serial, flight, seat, fare class and passenger name.  The signature covers the prefix, key id
and content exactly as transmitted, and is compared as text, so changing any one character
of a code makes it fail verification.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

from django.conf import settings

PREFIX = "SK1"


@dataclass(frozen=True)
class TicketContent:
    serial: str
    sale_id: int
    seat_no: str
    fare_class: str
    passenger_name: str


class BadTicketCode(Exception):
    """The code is malformed, signed with an unknown key, or its signature does not match."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _signature(key_id: str, signed_part: str) -> str:
    key = settings.TICKET_SIGNING_KEYS[key_id]
    digest = hmac.new(key.encode(), signed_part.encode("ascii"), hashlib.sha256).digest()
    return _b64(digest)


def sign_ticket(content: TicketContent) -> str:
    key_id = settings.TICKET_SIGNING_KEY_ID
    body = json.dumps(
        [
            content.serial,
            content.sale_id,
            content.seat_no,
            content.fare_class,
            content.passenger_name,
        ],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    signed_part = f"{PREFIX}.{key_id}.{_b64(body.encode())}"
    return f"{signed_part}.{_signature(key_id, signed_part)}"


def is_plausible_code(code: str) -> bool:
    """Codes we sign are short printable ASCII; anything else is refused as input (4xx) before
    it reaches the verifier or the scan log."""
    return 0 < len(code) <= 1000 and code.isascii() and code.isprintable()


def verify_ticket_code(code: str) -> TicketContent:
    """Return the signed content of `code`, or raise BadTicketCode."""
    code = code.strip()
    try:
        signed_part, signature = code.rsplit(".", 1)
        prefix, key_id, body = signed_part.split(".")
    except ValueError as exc:
        raise BadTicketCode("not a Seatkeeper ticket code") from exc
    if prefix != PREFIX or key_id not in settings.TICKET_SIGNING_KEYS or not signed_part.isascii():
        raise BadTicketCode("unknown code format or signing key")
    if not signature.isascii():  # compare_digest raises TypeError on non-ASCII text
        raise BadTicketCode("signature does not match")
    if not hmac.compare_digest(_signature(key_id, signed_part), signature):
        raise BadTicketCode("signature does not match")
    try:
        serial, sale_id, seat_no, fare_class, name = json.loads(_unb64(body))
        return TicketContent(str(serial), int(sale_id), str(seat_no), str(fare_class), str(name))
    except (ValueError, TypeError) as exc:  # signed by us, so only a bug gets here
        raise BadTicketCode("unreadable content") from exc
