"""Partner signing secrets: sealed at rest, rotatable with two live secrets that both sign
(issue 24, design risk 2)."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from kernel.outbox import relay_outbox
from partners import services
from partners.models import WebhookDelivery, WebhookEndpoint
from partners.secret_box import InvalidToken, open_sealed
from partners.signing import SIGNATURE_HEADER, verify_signature
from tests.api.conftest import client_for
from tests.bookings.confirming import hold_and_confirm
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_secret_is_stored_sealed_and_opens_only_with_our_key(partner, settings):
    endpoint = services.create_endpoint(
        owner=partner, url="https://hooks.example.com/x", event_types=["booking.confirmed"]
    )
    secret = endpoint.secret
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM partners_webhookendpoint WHERE id = %s", [endpoint.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert secret.startswith("whsec_") and secret not in row  # today: the secret, in clear
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == secret
    settings.PARTNER_SECRETS_KEY = "another deployment's key " * 3
    with pytest.raises(InvalidToken):
        open_sealed(WebhookEndpoint.objects.get(pk=endpoint.pk).secret_sealed)


def _signed_header(customer, flight, receiver, endpoint):
    hold_and_confirm(customer, flight)
    relay_outbox()
    delivery = WebhookDelivery.objects.filter(endpoint=endpoint).latest("id")
    result = services.attempt_delivery(delivery_id=delivery.pk)
    return result, services.delivery_body(WebhookDelivery.objects.get(pk=delivery.pk))


def test_during_a_rotation_both_secrets_sign_and_afterwards_only_the_new_one(
    customer, flight, receiver, partner_settings
):
    staff = UserFactory(is_staff=True, is_superuser=True)
    endpoint = services.create_endpoint(
        owner=staff, url=receiver.url, event_types=["booking.confirmed"]
    )
    old = endpoint.secret
    new = services.rotate_secret(endpoint=endpoint, overlap=timedelta(hours=1))
    assert new != old and WebhookEndpoint.objects.get(pk=endpoint.pk).secret == new

    receiver.secret = old  # a partner that has not switched yet
    result, _ = _signed_header(customer, flight, receiver, endpoint)
    assert result.status == "DELIVERED" and receiver.bad_signatures == 0

    now = timezone.now()
    live = WebhookEndpoint.objects.get(pk=endpoint.pk).live_secrets(now=now)
    assert live == [new, old]
    header = services.signatures_header(body=b"{}", secrets=live)
    assert header.count("v1=") == 2
    for secret in (old, new):
        verify_signature(body=b"{}", header=header, secret=secret, tolerance=300)

    # The overlap ends: only the new secret signs.
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret_expires_at=now - timedelta(seconds=1)
    )
    ended = WebhookEndpoint.objects.get(pk=endpoint.pk).live_secrets(now=now)
    assert ended == [new]


def test_rotating_again_keeps_at_most_two_live_secrets(partner):
    endpoint = services.create_endpoint(
        owner=partner, url="https://hooks.example.com/x", event_types=["booking.confirmed"]
    )
    first = endpoint.secret
    second = services.rotate_secret(endpoint=endpoint)
    third = services.rotate_secret(endpoint=endpoint)
    live = WebhookEndpoint.objects.get(pk=endpoint.pk).live_secrets(now=timezone.now())
    assert live == [third, second] and first not in live


def test_a_partner_rotates_its_own_secret_over_the_api_and_no_one_elses(partner):
    mine = services.create_endpoint(
        owner=partner, url="https://hooks.example.com/x", event_types=["booking.confirmed"]
    )
    rotated = client_for(partner).post(f"/api/partners/webhooks/{mine.pk}/rotate-secret")
    assert rotated.status_code == 200, rotated.content
    body = rotated.json()
    assert body["secret"] == WebhookEndpoint.objects.get(pk=mine.pk).secret
    assert body["previousSecretExpiresAt"]
    other = UserFactory()
    other.user_permissions.add(*partner.user_permissions.all())
    assert (
        client_for(other).post(f"/api/partners/webhooks/{mine.pk}/rotate-secret").status_code == 404
    )
    assert WebhookEndpoint.objects.get(pk=mine.pk).secret == body["secret"]


def test_the_signature_header_a_receiver_sees_carries_every_live_secret(
    customer, flight, receiver, partner_settings, monkeypatch
):
    seen = []
    original = receiver.handle

    def spy(headers, body):
        seen.append(headers.get(SIGNATURE_HEADER))
        return original(headers, body)

    monkeypatch.setattr(receiver, "handle", spy)
    staff = UserFactory(is_staff=True, is_superuser=True)
    endpoint = services.create_endpoint(
        owner=staff, url=receiver.url, event_types=["booking.confirmed"]
    )
    receiver.secret = services.rotate_secret(endpoint=endpoint)
    _signed_header(customer, flight, receiver, endpoint)
    assert seen and seen[0].count("v1=") == 2


# --- the data migration, both ways, with live rows ----------------------------------------------

BEFORE = ("partners", "0003_receive_all_bookings_permission")
AFTER = ("partners", "0004_seal_webhook_secrets")


@pytest.fixture
def back_to_latest():
    yield
    call_command("migrate", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_existing_secrets_are_sealed_forwards_and_opened_backwards(back_to_latest):
    owner = UserFactory()
    call_command("migrate", *BEFORE, verbosity=0)
    old = MigrationExecutor(connection).loader.project_state([BEFORE]).apps
    Endpoint = old.get_model("partners", "WebhookEndpoint")
    now = timezone.now()
    row = Endpoint.objects.create(
        owner_id=owner.pk,
        url="https://hooks.example.com/live",
        secret="whsec_live_row",
        event_types=["booking.confirmed"],
        created_at=now,
        updated_at=now,
    )

    call_command("migrate", *AFTER, verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret_sealed FROM partners_webhookendpoint WHERE id = %s", [row.pk])
        sealed = cursor.fetchone()[0]
    assert "whsec_live_row" not in sealed and open_sealed(sealed) == "whsec_live_row"

    call_command("migrate", *BEFORE, verbosity=0)
    assert Endpoint.objects.get(pk=row.pk).secret == "whsec_live_row"
