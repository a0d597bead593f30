"""Which URLs we agree to POST to: http(s) only, and (unless a setting allows it for dev and
tests) only public addresses, so an endpoint cannot point our workers at the internal network.
Checked on registration and again before every delivery (DNS may have changed since)."""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

from kernel.errors import InvalidRequest


def check_endpoint_url(url: str) -> str:
    """Return `url` if we may deliver to it; raise InvalidRequest (400) if not."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise InvalidRequest("Not a valid URL.", field="url") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidRequest("Only http and https URLs with a host are accepted.", field="url")
    if parts.username or parts.password:
        raise InvalidRequest("Credentials in the URL are not accepted.", field="url")
    if settings.PARTNER_WEBHOOKS["ALLOW_PRIVATE_URLS"]:
        return url
    try:
        infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise InvalidRequest("The URL's host does not resolve.", field="url") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global:
            raise InvalidRequest(
                "The URL points to a private, loopback or reserved address.", field="url"
            )
    return url
