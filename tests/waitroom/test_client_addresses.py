"""Issue 24, item 2: the waiting room's join limit counts customers, not the TLS proxy.

One client-address rule everywhere (kernel/web/client_ip.py), set in docker-compose.yml for
the proxy of docs/operations.md, and consistent with uvicorn's `--proxy-headers`: with or
without uvicorn's rewrite of the client address, the app sees the same customer.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from a2wsgi import WSGIMiddleware
from django.test import Client
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from kernel.web.client_ip import client_ip
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom.models import QueueEntry

COMPOSE = yaml.safe_load((Path(__file__).parents[2] / "docker-compose.yml").read_text())
# nginx's fixed address on compose's network: the one peer whose X-Forwarded-For is believed
PROXY = COMPOSE["services"]["nginx"]["networks"]["backend"]["ipv4_address"]


def compose_default(name: str) -> str:
    """The value compose gives `name` when the operator's environment does not."""
    value = COMPOSE["x-env"][name]
    found = re.fullmatch(r"\$\{\w+:-(.*)\}", value)
    return found.group(1) if found else value


@pytest.fixture
def behind_the_proxy(settings, room_redis):
    """The app configured as compose configures it, the address limit lowered to 3."""
    settings.NUM_PROXIES = int(compose_default("NUM_PROXIES"))
    settings.TRUSTED_PROXIES = compose_default("TRUSTED_PROXIES").split(",")
    settings.WAITING_ROOM = {
        **settings.WAITING_ROOM,
        "JOINS_PER_ACCOUNT_PER_MINUTE": 100,
        "JOINS_PER_ADDRESS_PER_MINUTE": 3,
    }


def test_compose_sets_one_consistent_proxy_configuration():
    """The app (TRUSTED_PROXIES), uvicorn (FORWARDED_ALLOW_IPS and the ws tier's
    --forwarded-allow-ips) and the network agree on one proxy: nginx's own address.  The
    HTTP nodes' granian rewrites no address: there the app's rule is the only one."""
    assert compose_default("NUM_PROXIES") == "1"
    trusted = compose_default("TRUSTED_PROXIES")
    assert trusted == compose_default("FORWARDED_ALLOW_IPS") == PROXY
    commands = [
        service["command"]
        for service in COMPOSE["services"].values()
        if "uvicorn" in str(service.get("command", ""))
    ]
    assert commands == [COMPOSE["services"]["ws"]["command"]]
    for command in commands:
        assert command[command.index("--forwarded-allow-ips") + 1] == PROXY
        assert "--proxy-headers" in command
    subnets = [c["subnet"] for c in COMPOSE["networks"]["backend"]["ipam"]["config"]]
    assert ipaddress.ip_address(PROXY) in ipaddress.ip_network(subnets[0])
    for service in ("web1", "web2"):
        command = COMPOSE["services"][service]["command"]
        assert command[0] == "granian" and command == COMPOSE["x-web"]["command"]
        assert not any("forward" in part or "proxy" in part for part in command)


@pytest.mark.django_db(transaction=True)
def test_five_customers_behind_the_proxy_all_join(behind_the_proxy):
    sale = protect(small_flight())
    customers = make_customers(5)
    url = f"/api/waiting-rooms/{sale.pk}/queue"
    answers = [
        client_for(c).post(url, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")
        for i, c in enumerate(customers, start=1)
    ]
    assert [a.status_code for a in answers] == [200] * 5
    assert sorted(QueueEntry.objects.values_list("joined_from", flat=True)) == [
        f"203.0.113.{i}" for i in range(1, 6)
    ]


@pytest.mark.django_db(transaction=True)
def test_five_customers_behind_the_proxy_all_join_from_the_queue_page(behind_the_proxy):
    sale = protect(small_flight())
    for i, customer in enumerate(make_customers(5), start=1):
        page = Client()
        page.force_login(customer)
        page.post(
            f"/waiting-room/{sale.pk}/join/",
            REMOTE_ADDR=PROXY,
            HTTP_X_FORWARDED_FOR=f"6.6.6.6, 198.51.100.{i}",  # the left one written by the client
        )
    assert sorted(QueueEntry.objects.values_list("joined_from", flat=True)) == [
        f"198.51.100.{i}" for i in range(1, 6)
    ]


@pytest.mark.django_db(transaction=True)
def test_control_five_customers_sharing_an_address_hit_the_limit(behind_the_proxy):
    sale = protect(small_flight())
    url = f"/api/waiting-rooms/{sale.pk}/queue"
    answers = [
        client_for(c).post(url, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.9")
        for c in make_customers(5)
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
    assert answers[-1].json()["type"].endswith("/too-many-joins")


def _address_seen(*, peer: str, forwarded: str | None, via_uvicorn: bool) -> str:
    """What client_ip() answers inside the production stack: a2wsgi under uvicorn's own
    ProxyHeadersMiddleware (trusting compose's FORWARDED_ALLOW_IPS), or a2wsgi alone."""

    def wsgi_app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [client_ip(SimpleNamespace(META=environ)).encode()]

    app = WSGIMiddleware(wsgi_app)
    if via_uvicorn:
        app = ProxyHeadersMiddleware(app, trusted_hosts=compose_default("FORWARDED_ALLOW_IPS"))
    headers = [(b"host", b"web")]
    if forwarded is not None:
        headers.append((b"x-forwarded-for", forwarded.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": (peer, 50000),
        "server": ("web", 8000),
    }
    body = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.body":
            body.append(message.get("body", b""))

    asyncio.run(app(scope, receive, send))
    return b"".join(body).decode()


CASES = [
    # (peer, X-Forwarded-For, the customer)
    (PROXY, "198.51.100.7", "198.51.100.7"),  # through the proxy
    (PROXY, "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # the client wrote one in front
    ("198.51.100.7", "6.6.6.6", "198.51.100.7"),  # straight to port 8000, forging
    (PROXY, None, PROXY),  # the proxy's own request
]


@pytest.mark.parametrize("via_uvicorn", [True, False], ids=["uvicorn-rewrites", "app-alone"])
@pytest.mark.parametrize("peer,forwarded,customer", CASES)
def test_uvicorn_proxy_headers_and_the_app_never_strip_twice(
    settings, via_uvicorn, peer, forwarded, customer
):
    settings.NUM_PROXIES = int(compose_default("NUM_PROXIES"))
    settings.TRUSTED_PROXIES = compose_default("TRUSTED_PROXIES").split(",")
    assert _address_seen(peer=peer, forwarded=forwarded, via_uvicorn=via_uvicorn) == customer


def test_control_without_trusted_proxies_a_direct_client_chooses_its_address(settings):
    settings.NUM_PROXIES = 1
    settings.TRUSTED_PROXIES = []
    for via_uvicorn in (True, False):
        seen = _address_seen(peer="198.51.100.7", forwarded="6.6.6.6", via_uvicorn=via_uvicorn)
        assert seen == "6.6.6.6"
