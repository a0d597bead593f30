"""The client's address: the one place that decides whether to believe `X-Forwarded-For`.

A client can put anything in that header, so it is read only when the deployment says how
many proxies of its own append to it (`NUM_PROXIES`), and, when `TRUSTED_PROXIES` is set,
only when the connection itself comes from one of them.  With the defaults (no proxies) the
address is the connection's `REMOTE_ADDR`.  Throttles, login lockouts and logs all use this.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _from_trusted_proxy(remote_addr: str) -> bool:
    networks = settings.TRUSTED_PROXIES
    if not networks:
        return True
    if not _is_ip(remote_addr):
        return False
    address = ipaddress.ip_address(remote_addr)
    return any(address in ipaddress.ip_network(net, strict=False) for net in networks)


def client_ip(request) -> str:
    """The address of whoever sent `request` (a Django or DRF request)."""
    meta = request.META
    remote_addr = meta.get("REMOTE_ADDR") or ""
    proxies = settings.NUM_PROXIES
    if proxies <= 0 or not _from_trusted_proxy(remote_addr):
        return remote_addr
    forwarded = [a.strip() for a in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
    if not forwarded:
        return remote_addr
    # Each of our proxies appends the address it saw: the client is `proxies` from the right.
    # Anything further left was written by the client and is ignored.
    candidate = forwarded[-min(proxies, len(forwarded))]
    return candidate if _is_ip(candidate) else remote_addr


def address_prefix(address: str | None) -> str:
    """The network an address is counted by where one household or one carrier NAT pool
    should count once: IPv4 /24, IPv6 /64 (one customer's usual delegation); an IPv4-mapped
    IPv6 address as its IPv4.  "" when there is no usable address."""
    if not address or not _is_ip(address):
        return ""
    ip = ipaddress.ip_address(address)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    bits = 24 if ip.version == 4 else 64
    return str(ipaddress.ip_network(f"{ip}/{bits}", strict=False))
