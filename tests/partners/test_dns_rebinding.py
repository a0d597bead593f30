"""Partner webhooks connect to the address that was checked (issue 24, item 5).

A resolver answers the check with one address and the connection with another (DNS
rebinding).  Two real servers listen on the same port of 127.0.0.2 (standing for the
partner's public server: the check is relaxed for it alone) and 127.0.0.1 (our own network):
where the POST arrives proves where it went."""

import ipaddress

import pytest
from django.utils import timezone

from kernel.errors import InvalidRequest
from kernel.outbox import relay_outbox
from partners import urls_check
from partners.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from partners.services import attempt_delivery
from partners.urls_check import check_endpoint_url
from tests.bookings.confirming import hold_and_confirm
from tests.factories import StaffFactory
from tests.partners.pinning import (
    HOST,
    rebinding_resolver,
    start_recorder,
    tls_files,
    treat_as_public,
)

pytestmark = pytest.mark.django_db
PUBLIC, INTERNAL = "127.0.0.2", "127.0.0.1"


@pytest.fixture
def production_check(partner_settings):
    partner_settings.PARTNER_WEBHOOKS = {
        **partner_settings.PARTNER_WEBHOOKS,
        "ALLOW_PRIVATE_URLS": False,
        "TIMEOUT_SECONDS": 3,
    }
    return partner_settings


@pytest.fixture
def servers():
    """(partner's, internal): two recorders on one port of two loopback addresses."""
    public = start_recorder(PUBLIC)
    internal = start_recorder(INTERNAL, port=public.port)
    yield public, internal
    public.stop()
    internal.stop()


def _pending_delivery(customer, flight, url):
    # Written directly: the endpoint row as a registration that passed its check left it.
    now = timezone.now()
    WebhookEndpoint.objects.create(
        owner=StaffFactory(),
        url=url,
        secret="whsec_test",
        event_types=["booking.confirmed"],
        created_at=now,
        updated_at=now,
    )
    hold_and_confirm(customer, flight)
    relay_outbox()
    return WebhookDelivery.objects.get()


def test_a_rebinding_resolver_cannot_move_the_post_to_the_internal_address(
    customer, flight, production_check, servers, monkeypatch
):
    public, internal = servers
    treat_as_public(monkeypatch, PUBLIC)
    answers = rebinding_resolver(monkeypatch, PUBLIC, INTERNAL)
    delivery = _pending_delivery(customer, flight, f"http://{HOST}:{public.port}/hooks")

    result = attempt_delivery(delivery_id=delivery.pk)

    assert result.status == DeliveryStatus.DELIVERED
    assert public.requests == [("POST", "/hooks", f"{HOST}:{public.port}")]
    assert internal.requests == []  # today: the second answer, 127.0.0.1, got the POST
    assert answers == [PUBLIC]  # resolved once, for the check


def test_control_the_same_resolver_answering_internal_first_is_refused(
    customer, flight, production_check, servers, monkeypatch
):
    public, internal = servers
    treat_as_public(monkeypatch, PUBLIC)
    rebinding_resolver(monkeypatch, INTERNAL, PUBLIC)
    delivery = _pending_delivery(customer, flight, f"http://{HOST}:{public.port}/hooks")

    result = attempt_delivery(delivery_id=delivery.pk)

    assert result.status == DeliveryStatus.FAILED
    assert WebhookDelivery.objects.get().last_error.startswith("refused")
    assert public.requests == internal.requests == []


def test_tls_keeps_sni_and_the_certificate_check_on_the_host_name(
    customer, flight, production_check, monkeypatch, tmp_path
):
    context, ca_bundle = tls_files(tmp_path)
    public = start_recorder(PUBLIC, tls=context)
    internal = start_recorder(INTERNAL, port=public.port, tls=tls_files(tmp_path / "x")[0])
    try:
        production_check.PARTNER_WEBHOOKS = {
            **production_check.PARTNER_WEBHOOKS,
            "CA_BUNDLE": str(ca_bundle),
        }
        treat_as_public(monkeypatch, PUBLIC)
        rebinding_resolver(monkeypatch, PUBLIC, INTERNAL)
        delivery = _pending_delivery(customer, flight, f"https://{HOST}:{public.port}/hooks")

        result = attempt_delivery(delivery_id=delivery.pk)

        assert result.status == DeliveryStatus.DELIVERED, WebhookDelivery.objects.get().last_error
        assert public.server_names == [HOST]  # SNI names the host, not the pinned address
        assert len(public.requests) == 1 and internal.requests == []
    finally:
        public.stop()
        internal.stop()


def test_control_a_certificate_for_another_name_is_refused(
    customer, flight, production_check, monkeypatch, tmp_path
):
    context, ca_bundle = tls_files(tmp_path, host="other.partner.test")
    public = start_recorder(PUBLIC, tls=context)
    try:
        production_check.PARTNER_WEBHOOKS = {
            **production_check.PARTNER_WEBHOOKS,
            "CA_BUNDLE": str(ca_bundle),
        }
        treat_as_public(monkeypatch, PUBLIC)
        rebinding_resolver(monkeypatch, PUBLIC)
        delivery = _pending_delivery(customer, flight, f"https://{HOST}:{public.port}/hooks")

        result = attempt_delivery(delivery_id=delivery.pk)

        assert result.response_code is None
        assert WebhookDelivery.objects.get().last_error == "SSLError"
        assert public.requests == []
    finally:
        public.stop()


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_environment_proxies_are_not_used(
    customer, flight, receiver, monkeypatch, scheme, tmp_path, partner_settings
):
    proxy = start_recorder(INTERNAL)
    target = receiver.url
    if scheme == "https":
        context, ca_bundle = tls_files(tmp_path)
        server = start_recorder(INTERNAL, tls=context)
        rebinding_resolver(monkeypatch, INTERNAL)
        target = f"https://{HOST}:{server.port}/hooks"
        partner_settings.PARTNER_WEBHOOKS = {
            **partner_settings.PARTNER_WEBHOOKS,
            "CA_BUNDLE": str(ca_bundle),
        }
    try:
        for name in ("NO_PROXY", "no_proxy"):
            monkeypatch.delenv(name, raising=False)
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
        delivery = _pending_delivery(customer, flight, target)

        attempt_delivery(delivery_id=delivery.pk)

        assert proxy.requests == []  # today: the proxy got the POST (or the CONNECT)
        if scheme == "https":
            assert len(server.requests) == 1
        else:
            assert len(receiver.accepted) + receiver.bad_signatures == 1
    finally:
        proxy.stop()
        if scheme == "https":
            server.stop()


EMBEDDED_PRIVATE = [
    "64:ff9b::7f00:1",  # NAT64 well-known prefix, 127.0.0.1
    "64:ff9b::a00:1",  # 10.0.0.1
    "64:ff9b:1::a00:1",  # RFC 8215 local-use NAT64
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
    "::7f00:1",  # IPv4-compatible ::127.0.0.1
    "::10.0.0.1",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "::ffff:0:a00:1",  # IPv4-translated
]


@pytest.mark.parametrize("address", EMBEDDED_PRIVATE)
def test_ipv6_forms_of_internal_ipv4_addresses_are_refused(address, production_check, monkeypatch):
    rebinding_resolver(monkeypatch, address)
    url = f"https://{HOST}/hooks"
    with pytest.raises(InvalidRequest):
        check_endpoint_url(url)
    with pytest.raises(InvalidRequest):
        urls_check.delivery_target(url)


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::808:808", "2002:808:808::1", "2606:4700:4700::1111", "8.8.8.8"],
)
def test_control_public_addresses_and_their_ipv6_forms_are_accepted(
    address, production_check, monkeypatch
):
    rebinding_resolver(monkeypatch, address)
    assert urls_check.is_public_address(ipaddress.ip_address(address))
    assert urls_check.delivery_target(f"https://{HOST}/hooks").address == address
