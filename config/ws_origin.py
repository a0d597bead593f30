"""Who may open a websocket: pages of this very site, nothing else.

Websockets are not covered by CSRF protection, and a browser lets any site open one to any
server.  The only thing a browser guarantees is the Origin header, so the handshake is
accepted when Origin names the same host and port the handshake was sent to (the way
Django's CSRF check compares Origin with the Host), or an origin listed in
CSRF_TRUSTED_ORIGINS.  That is stricter than channels' AllowedHostsOriginValidator, which
accepts any port of any allowed host name.  A handshake without Origin is refused too.
"""

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host


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


class SameOriginValidator:
    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator only guards websocket connections.")
        if origin_allowed(origin=_header(scope, b"origin"), host=_header(scope, b"host")):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
