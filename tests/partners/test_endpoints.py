"""Registering endpoints over the API and in admin: who may, what is refused, the secret
shown once."""

import pytest

from partners.models import WebhookEndpoint
from tests.api.conftest import client_for, problem
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db
URL = "https://hooks.example.com/seatkeeper"


def create(client, **body):
    return client.post(
        "/api/partners/webhooks",
        {"url": URL, "eventTypes": ["booking.confirmed", "refund.issued"], **body},
        format="json",
    )


def test_partner_registers_an_endpoint_and_sees_the_secret_once(partner):
    client = client_for(partner)
    created = create(client, description="CRM")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 30
    assert body["eventTypes"] == ["booking.confirmed", "refund.issued"]
    assert created["Location"] == f"/api/partners/webhooks/{body['endpointId']}"
    assert WebhookEndpoint.objects.get().secret == body["secret"]

    read = client.get(created["Location"]).json()
    listed = client.get("/api/partners/webhooks").json()
    assert "secret" not in read and all("secret" not in e for e in listed)
    assert read["url"] == URL and [e["endpointId"] for e in listed] == [body["endpointId"]]

    patched = client.patch(
        created["Location"], {"isActive": False, "eventTypes": ["waitlist.offered"]}, format="json"
    )
    assert patched.status_code == 200
    assert patched.json()["isActive"] is False
    assert WebhookEndpoint.objects.get().event_types == ["waitlist.offered"]
    deliveries = client.get(created["Location"] + "/deliveries")
    assert deliveries.status_code == 200 and deliveries.json() == []
    assert client.delete(created["Location"]).status_code == 204
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://hooks.example.com/x"}, "url"),
        ({"url": "http://127.0.0.1:8000/internal"}, "url"),
        ({"url": "http://10.1.2.3/x"}, "url"),
        ({"url": "http://[::1]/x"}, "url"),
        ({"url": "http://user:pw@hooks.example.com/x"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"eventTypes": ["booking.expired"]}, "eventTypes[0]"),
        ({"eventTypes": []}, "eventTypes"),
    ],
)
def test_bad_endpoints_are_problems_and_change_nothing(partner, partner_settings, body, field):
    # Production shape: private and loopback addresses are refused.
    partner_settings.PARTNER_WEBHOOKS = {
        **partner_settings.PARTNER_WEBHOOKS,
        "ALLOW_PRIVATE_URLS": False,
    }
    response = create(client_for(partner), **body)
    params = problem(response, 400)["invalidParams"]
    assert field in {p["name"] for p in params}, params
    assert not WebhookEndpoint.objects.exists()


def test_only_partners_and_staff_manage_endpoints_and_each_partner_only_its_own(partner):
    assert problem(create(client_for(UserFactory())), 403)
    assert problem(client_for(None).get("/api/partners/webhooks"), 401)
    mine = create(client_for(partner)).json()["endpointId"]

    other_partner = UserFactory(username="otheragent")
    other_partner.user_permissions.set(partner.user_permissions.all())
    other = client_for(other_partner)
    assert other.get("/api/partners/webhooks").json() == []
    for method in ("get", "patch", "delete"):
        problem(getattr(other, method)(f"/api/partners/webhooks/{mine}", {}, format="json"), 404)
    assert WebhookEndpoint.objects.get(pk=mine).is_active

    staff = client_for(StaffFactory())
    assert [e["endpointId"] for e in staff.get("/api/partners/webhooks").json()] == [mine]


def test_admin_registers_an_endpoint_shows_the_secret_once_and_refuses_bad_urls(
    client, staff_user, partner_settings
):
    partner_settings.PARTNER_WEBHOOKS = {
        **partner_settings.PARTNER_WEBHOOKS,
        "ALLOW_PRIVATE_URLS": False,
    }
    client.force_login(staff_user)
    form = {
        "owner": staff_user.pk,
        "url": "http://169.254.169.254/latest/meta-data",
        "event_types": '["booking.confirmed"]',
        "is_active": "on",
        "description": "",
    }
    refused = client.post("/admin/partners/webhookendpoint/add/", form)
    assert refused.status_code == 200 and b"private, loopback or reserved" in refused.content
    assert not WebhookEndpoint.objects.exists()

    form["url"] = "https://93.184.215.14/hooks"  # a public address: no DNS needed
    added = client.post("/admin/partners/webhookendpoint/add/", form, follow=True)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret.encode() in added.content  # the message, once
    change = client.get(f"/admin/partners/webhookendpoint/{endpoint.pk}/change/")
    assert change.status_code == 200 and endpoint.secret.encode() not in change.content
    log = client.get("/admin/partners/webhookdelivery/")
    assert log.status_code == 200
