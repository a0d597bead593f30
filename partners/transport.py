"""The HTTP session a webhook delivery is POSTed with: it connects to the address that
`urls_check.delivery_target` checked, never to a second DNS answer.

Requests would resolve the host again when it connects, and a DNS server answering "public"
to the check and "127.0.0.1" a moment later (rebinding) would send our POST, and the answer's
status code in the delivery log, to the internal network.  Here the socket is opened to the
pinned address while everything else speaks the host name: the Host header, TLS SNI and the
certificate check (urllib3 takes the name from the connection's `host`, left untouched).

The session ignores the environment (`trust_env=False`): an HTTPS_PROXY would otherwise
carry the request to wherever the proxy resolves the name, around the pin, and `.netrc`
credentials would be offered to partners."""

from __future__ import annotations

import socket

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection

from partners.urls_check import Target


class _PinnedConnection:
    """Mixin for urllib3 connections: open the socket to `pinned_address`."""

    pinned_address: str

    def _new_conn(self) -> socket.socket:
        try:
            return urllib3_connection.create_connection(
                (self.pinned_address, self.port),  # type: ignore[attr-defined]
                self.timeout,  # type: ignore[attr-defined]
                source_address=self.source_address,  # type: ignore[attr-defined]
                socket_options=self.socket_options,  # type: ignore[attr-defined]
            )
        except TimeoutError as exc:
            raise ConnectTimeoutError(
                self, f"Connection to {self.pinned_address} timed out."
            ) from exc
        except OSError as exc:
            raise NewConnectionError(
                self, f"Failed to connect to {self.pinned_address}: {exc}"
            ) from exc


class PinnedAdapter(HTTPAdapter):
    """A transport adapter whose every connection goes to one checked address."""

    def __init__(self, address: str) -> None:
        self.pinned_address = address
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        pin = {"pinned_address": self.pinned_address}
        http = type("PinnedHTTPConnection", (_PinnedConnection, HTTPConnection), pin)
        https = type("PinnedHTTPSConnection", (_PinnedConnection, HTTPSConnection), pin)
        self.poolmanager.pool_classes_by_scheme = {
            "http": type("PinnedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http}),
            "https": type("PinnedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https}),
        }


def pinned_session(target: Target) -> requests.Session:
    """A session for one delivery to `target`: pinned, blind to environment proxies."""
    session = requests.Session()
    session.trust_env = False
    session.verify = settings.PARTNER_WEBHOOKS.get("CA_BUNDLE") or True
    adapter = PinnedAdapter(target.address)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
