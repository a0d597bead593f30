"""Who may open a websocket: pages of this very site, nothing else.

Websockets are not covered by CSRF protection, and a browser lets any site open one to any
server.  The only thing a browser guarantees is the Origin header, so the handshake is
accepted when Origin names the same host and port the handshake was sent to (the way
Django's CSRF check compares Origin with the Host), or an origin listed in
CSRF_TRUSTED_ORIGINS.  That is stricter than channels' AllowedHostsOriginValidator, which
accepts any port of any allowed host name.  A handshake without Origin is refused too,
except a server-to-server client's on the queue socket that brings a valid ticket for that
room (`waitroom.socket_tickets`): a browser always sends Origin, so a page of another site is
still refused.  A forged, foreign or expired ticket is refused here, before any consumer
runs; the consumer checks the ticket's account before it accepts.

A refusal is a plain ASGI answer, not channels' WebsocketDenier: that is a consumer, which
opens a channel-layer channel for every refused handshake and listens on it until the
client's disconnect arrives (a Redis BRPOP per refusal, and a task left to cancel).
"""

import re
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host

from waitroom.socket_tickets import customer_of_ticket, ticket_in

TICKET_PATH = re.compile(r"/ws/waiting-room/(?P<room_id>[0-9]{1,18})/")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin1")
    return None


def origin_allowed(*, origin: str | None, host: str | None) -> bool:
    if not origin or not host:
        return False
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, allowed_hosts):
        return False
    parts = urlsplit(origin)
    return parts.scheme in {"http", "https"} and parts.netloc.lower() == host.lower()


def valid_ticket_bearer(scope) -> bool:
    """A queue-socket handshake whose ticket is signed, unexpired and for this very room."""
    route = TICKET_PATH.fullmatch(scope.get("path", ""))
    if route is None:
        return False
    room_id = int(route["room_id"])
    return customer_of_ticket(ticket_in(scope), room_id=room_id) is not None


class SameOriginValidator:
    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator only guards websocket connections.")
        origin = _header(scope, b"origin")
        if origin_allowed(origin=origin, host=_header(scope, b"host")) or (
            origin is None and valid_ticket_bearer(scope)
        ):
            return await self.application(scope, receive, send)
        return await refuse_handshake(receive, send)


async def refuse_handshake(receive, send) -> None:
    """Closes the handshake before accepting it (the server answers HTTP 403) and returns:
    nothing is opened, so nothing is left to wait for the client's disconnect."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close"})
