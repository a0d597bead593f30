"""Which URLs we agree to POST to: http(s) only, and (unless a setting allows it for dev and
tests) only public addresses, so an endpoint cannot point our workers at the internal network.
Checked on registration and again before every delivery (DNS may have changed since); the
delivery then connects to the very address that was checked (`partners.transport`), so a DNS
answer that changes between the check and the connection (rebinding) cannot move it."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from kernel.errors import InvalidRequest

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# IPv6 forms that carry an IPv4 address in their low 32 bits and reach it: NAT64 (RFC 6052
# well-known and RFC 8215 local-use prefixes), IPv4-mapped, IPv4-translated (RFC 2765) and
# the deprecated IPv4-compatible ::a.b.c.d.
_LOW_32_BITS_CARRIERS = tuple(
    ipaddress.IPv6Network(n)
    for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0/96", "::ffff:0:0:0/96", "::/96")
)
# RFC 8215: a local-use NAT64 prefix of any length up to /96, so where its IPv4 sits is the
# operator's choice; never a partner's public address.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


@dataclass(frozen=True)
class Target:
    """Where one delivery goes: the URL as written (its host name for the Host header, TLS SNI
    and the certificate) and the address that was checked, which is the one connected to."""

    url: str
    host: str
    port: int
    address: str


def embedded_ipv4(address: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to (6to4, Teredo server and client, NAT64,
    mapped, compatible); empty for a plain IPv6 or an IPv4 address."""
    if address.version != 6:
        return []
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if any(address in net for net in _LOW_32_BITS_CARRIERS) and int(address) > 1:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public_address(address: IPAddress) -> bool:
    """Whether we may connect to `address`: globally reachable, and so is every IPv4 address
    inside it (64:ff9b::7f00:1 is 127.0.0.1 through a NAT64 gateway)."""
    if not address.is_global:
        return False
    if address.version == 6 and address in _LOCAL_NAT64:
        return False
    return all(inner.is_global for inner in embedded_ipv4(address))


def _parse(url: str) -> tuple[str, int]:
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        raise InvalidRequest("Not a valid URL.", field="url") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidRequest("Only http and https URLs with a host are accepted.", field="url")
    if parts.username or parts.password:
        raise InvalidRequest("Credentials in the URL are not accepted.", field="url")
    return host, port or (443 if parts.scheme == "https" else 80)


def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        raise InvalidRequest("The URL's host does not resolve.", field="url") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    if not addresses:
        raise InvalidRequest("The URL's host does not resolve.", field="url")
    return addresses


def _refuse_private(addresses: list[IPAddress]) -> None:
    if settings.PARTNER_WEBHOOKS["ALLOW_PRIVATE_URLS"]:
        return
    if not all(is_public_address(a) for a in addresses):
        raise InvalidRequest(
            "The URL points to a private, loopback or reserved address.", field="url"
        )


def check_endpoint_url(url: str) -> str:
    """Return `url` if we may deliver to it; raise InvalidRequest (400) if not."""
    host, port = _parse(url)
    if settings.PARTNER_WEBHOOKS["ALLOW_PRIVATE_URLS"]:
        return url
    _refuse_private(_resolve(host, port))
    return url


def delivery_target(url: str) -> Target:
    """Resolve `url`'s host once, check every answer, and name the address to connect to
    (the first answer).  InvalidRequest if any answer is not public."""
    host, port = _parse(url)
    addresses = _resolve(host, port)
    _refuse_private(addresses)
    return Target(url=url, host=host, port=port, address=str(addresses[0]))
