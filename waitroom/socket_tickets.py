"""Queue-websocket tickets: how a token-only client (a partner's server, no browser session)
opens `/ws/waiting-room/<room id>/`.

A websocket handshake cannot carry `Authorization: Token …` from most clients, and the API
token must not travel in a URL (it would land in access logs for good).  So the client asks
`POST /api/waiting-rooms/{roomId}/queue/ticket` with its token and passes the answer on
connect as `?ticket=`.  A ticket is signed (Django's signing with a salt of its own), names
one room and one account, and lives `TICKET_SECONDS`: a logged URL is useless a minute later.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import parse_qs

from django.core import signing
from django.utils import timezone

SALT = "waitroom.socket-ticket"
TICKET_SECONDS = 60


def issue_ticket(*, room_id: int, customer_id: int) -> tuple[str, datetime]:
    """A ticket for this room and account, and when it stops opening sockets."""
    ticket = signing.dumps({"room": room_id, "customer": customer_id}, salt=SALT, compress=False)
    return ticket, timezone.now() + timedelta(seconds=TICKET_SECONDS)


def customer_of_ticket(ticket: str | None, *, room_id: int) -> int | None:
    """The account a valid, unexpired ticket for `room_id` names; else None."""
    if not ticket or len(ticket) > 300:
        return None
    try:
        claims = signing.loads(ticket, salt=SALT, max_age=TICKET_SECONDS)
    except signing.BadSignature:  # also SignatureExpired
        return None
    if not isinstance(claims, dict) or claims.get("room") != room_id:
        return None
    customer = claims.get("customer")
    return customer if isinstance(customer, int) else None


def ticket_in(scope: dict) -> str | None:
    """The `ticket` query parameter of a websocket handshake, if any."""
    query = parse_qs(scope.get("query_string", b"").decode("latin1"))
    values = query.get("ticket")
    return values[0] if values else None
