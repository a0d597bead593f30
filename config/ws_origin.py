"""Who may open a websocket: pages of this very site, nothing else.

Websockets are not covered by CSRF protection, and a browser lets any site open one to any
server.  The only thing a browser guarantees is the Origin header, so the handshake is
accepted when Origin names the same host and port the handshake was sent to (the way
Django's CSRF check compares Origin with the Host), or an origin listed in
CSRF_TRUSTED_ORIGINS.  That is stricter than channels' AllowedHostsOriginValidator, which
accepts any port of any allowed host name.  A handshake without Origin is refused too,
except a server-to-server client's on the queue socket that brings a ticket
(`waitroom.socket_tickets`): a browser always sends Origin, so a page of another site is
still refused, and the consumer checks the ticket before it accepts.
"""

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from waitroom.socket_tickets import ticket_in

TICKET_PATH_PREFIX = "/ws/waiting-room/"


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


def ticket_bearer(scope) -> bool:
    """A queue-socket handshake that carries a ticket (checked by the consumer, not here)."""
    return scope.get("path", "").startswith(TICKET_PATH_PREFIX) and ticket_in(scope) is not None


class SameOriginValidator:
    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator only guards websocket connections.")
        origin = _header(scope, b"origin")
        if origin_allowed(origin=origin, host=_header(scope, b"host")) or (
            origin is None and ticket_bearer(scope)
        ):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
