"""The gate API (open a gate, sync scans) and the live-code API: permissions, problem+json
on bad input with nothing changed, and their place in the OpenAPI schema."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth.models import Permission
from django.utils import timezone

from bookings.gate_codes import b64, raw_public_key, step_at
from bookings.gate_offline import iso
from bookings.models import GateDevice, GateScan, TicketCredential
from bookings.tickets import ScanOutcome, scan_ticket
from tests.api.conftest import client_for, problem
from tests.bookings.test_checkin import ticketed
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(db):
    user = UserFactory(username="door", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="operate_gate"))
    return user


def open_body(flight, **changes):
    return {"flightId": flight.pk, "name": "Gate B12", "gateTime": iso(time.time()), **changes}


def open_gate(api, flight) -> int:
    response = api.post("/api/gates", open_body(flight), format="json")
    assert response.status_code == 201, response.content
    return response.json()["deviceId"]


# --- who may run a gate ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"),
    [("anonymous", 401), ("customer", 403), ("staff without the permission", 403)],
)
def test_only_gate_operators_open_and_sync_gates(who, status, operator, flight):
    caller = {
        "anonymous": None,
        "customer": UserFactory(),
        "staff without the permission": UserFactory(username="desk", is_staff=True),
    }[who]
    device_id = open_gate(client_for(operator), flight)
    api = client_for(caller)

    opened = api.post("/api/gates", open_body(flight), format="json")
    synced = api.post(
        f"/api/gates/{device_id}/scans", {"gateTime": iso(time.time()), "scans": []}, format="json"
    )

    problem(opened, status)
    problem(synced, status)
    assert GateDevice.objects.count() == 1


def test_operators_and_superusers_open_gates(operator, flight):
    assert open_gate(client_for(operator), flight)
    assert open_gate(client_for(StaffFactory()), flight)


# --- bad input: a 4xx problem, nothing written ------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({"eventId": 1}, 400),  # both flight and event
        ({"flightId": None}, 400),
        ({"flightId": 987654}, 404),
        ({"name": "Gate\x00"}, 400),
        ({"name": ""}, 400),
        ({"gateTime": "yesterday"}, 400),
        ({"gateTime": iso(time.time() - 2 * 86400)}, 400),  # a clock two days off is broken
    ],
)
def test_opening_a_gate_with_bad_input_is_a_problem(operator, flight, changes, status):
    body = {k: v for k, v in open_body(flight, **changes).items() if v is not None}
    response = client_for(operator).post("/api/gates", body, format="json")
    problem(response, status)
    assert GateDevice.objects.count() == 0


# Resolved when the test runs, not when it is collected: a long run would reach it.
TEN_MINUTES_AHEAD = "ten minutes ahead of the gate's clock"


def scan(**changes):
    return {
        "localId": "a1",
        "serial": "abc",
        "certId": "",
        "outcome": "valid",
        "scannedAt": iso(time.time() - 5),
        **changes,
    }


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"scans": [scan(outcome="let them in")]}, "scans[0].outcome"),
        ({"scans": [scan(scannedAt=TEN_MINUTES_AHEAD)]}, "scans[0].scannedAt"),
        ({"scans": [scan(), scan()]}, "scans"),
        ({"scans": [scan(serial="é")]}, "scans[0].serial"),
        ({"scans": [scan(localId="x" * 41)]}, "scans[0].localId"),
        ({"scans": [scan()] * 2001}, "scans"),
        ({"scans": "all of them"}, "scans"),
        ({"gateTime": None, "scans": []}, "gateTime"),
    ],
)
def test_syncing_bad_input_is_a_problem_and_records_nothing(operator, flight, body, param):
    api = client_for(operator)
    device_id = open_gate(api, flight)
    for one in body.get("scans", []) if isinstance(body.get("scans"), list) else []:
        if one.get("scannedAt") == TEN_MINUTES_AHEAD:  # ahead of the gate's clock when sent
            one["scannedAt"] = iso(time.time() + 600)
    body = {"gateTime": iso(time.time()), **body}
    body = {k: v for k, v in body.items() if v is not None}

    response = api.post(f"/api/gates/{device_id}/scans", body, format="json")

    names = [p["name"] for p in problem(response, 400)["invalidParams"]]
    assert any(name.startswith(param) for name in names), names
    assert GateScan.objects.count() == 0
    assert GateDevice.objects.get(pk=device_id).synced_at is None


def test_syncing_an_unknown_gate_is_404(operator):
    response = client_for(operator).post(
        "/api/gates/987654/scans", {"gateTime": iso(time.time()), "scans": []}, format="json"
    )
    problem(response, 404)


# --- the live code of a ticket --------------------------------------------------------------


def credential_url(ticket):
    return f"/api/bookings/{ticket.booking_id}/tickets/{ticket.pk}/credential"


def live_code_url(ticket):
    return f"/api/bookings/{ticket.booking_id}/tickets/{ticket.pk}/live-code"


def test_the_owner_certifies_a_device_key_once(customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    public = b64(raw_public_key(Ed25519PrivateKey.generate().public_key()))
    api = client_for(customer)

    first = api.post(credential_url(ticket), {"publicKey": public}, format="json")
    again = api.post(credential_url(ticket), {"publicKey": public}, format="json")

    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["certificate"] == again.json()["certificate"]
    assert first.json()["origin"] == "DEVICE" and first.json()["stepSeconds"] == 15
    problem(api.get(live_code_url(ticket)), 409)  # the device signs; the server cannot


def test_the_server_made_key_gives_a_code_the_gate_accepts(customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    api = client_for(customer)
    assert api.post(credential_url(ticket), {}, format="json").status_code == 201

    live = api.get(live_code_url(ticket))

    assert live.status_code == 200 and live["Cache-Control"] == "private, no-store"
    assert live.json()["step"] == step_at(time.time())
    assert (
        scan_ticket(code=live.json()["code"], sale_id=flight.sale_id, scanned_by=staff_user).outcome
        == ScanOutcome.VALID
    )
    problem(api.get(live_code_url(ticket)), 409)  # used now: no live code
    problem(api.post(credential_url(ticket), {}, format="json"), 409)


@pytest.mark.parametrize(
    "public_key", ["short", "é" * 43, b64(b"x" * 31) + "AAA", b64(b"x" * 33), 12345]
)
def test_a_bad_public_key_is_400_and_certifies_nothing(customer, flight, public_key):
    _, (ticket, _) = ticketed(customer, flight)
    response = client_for(customer).post(
        credential_url(ticket), {"publicKey": public_key}, format="json"
    )
    problem(response, 400)
    assert not TicketCredential.objects.exists()


def test_someone_elses_ticket_has_no_credential_for_you(customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    stranger = client_for(UserFactory())
    problem(stranger.post(credential_url(ticket), {}, format="json"), 404)
    problem(stranger.get(live_code_url(ticket)), 404)
    problem(client_for(None).post(credential_url(ticket), {}, format="json"), 401)
    assert not TicketCredential.objects.exists()


# --- the schema --------------------------------------------------------------------------------


def test_the_schema_documents_the_gate_and_live_code_endpoints(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    ticket = "/api/bookings/{bookingId}/tickets/{ticketId}"
    assert {"201", "400", "401", "403", "404"} <= set(paths["/api/gates"]["post"]["responses"])
    assert {"200", "400", "401", "403", "404"} <= set(
        paths["/api/gates/{deviceId}/scans"]["post"]["responses"]
    )
    assert {"200", "201", "400", "409"} <= set(paths[f"{ticket}/credential"]["post"]["responses"])
    assert {"200", "409"} <= set(paths[f"{ticket}/live-code"]["get"]["responses"])
    bundle = schema["components"]["schemas"]["Bundle"]["properties"]
    assert {"keys", "revokedSerials", "staticCodes", "clockOffsetMs", "skewSteps"} <= set(bundle)
    scans = schema["components"]["schemas"]["ScanReportRequest"]["properties"]
    assert {"localId", "serial", "certId", "outcome", "scannedAt"} == set(scans)


def test_the_bundle_is_fresh_after_each_sync(operator, customer, flight):
    api = client_for(operator)
    device_id = open_gate(api, flight)
    _, (ticket, _) = ticketed(customer, flight)  # sold after the gate was opened

    later = timezone.now() + timedelta(seconds=1)
    answer = api.post(
        f"/api/gates/{device_id}/scans",
        {"gateTime": iso(later.timestamp()), "scans": []},
        format="json",
    ).json()

    assert ticket.serial in {c["serial"] for c in answer["bundle"]["staticCodes"].values()}


def test_a_key_that_is_not_32_bytes_of_canonical_base64url_is_refused(customer, flight):
    """The schema's pattern is the server's rule: 43 characters whose last carries only the
    key's last two bits (and an optional "="); anything else is a 400 and certifies nothing."""
    _, (ticket, _) = ticketed(customer, flight)
    public = b64(raw_public_key(Ed25519PrivateKey.generate().public_key()))
    api = client_for(customer)
    non_canonical = public[:42] + ("B" if public[42] != "B" else "C")  # low bits not zero
    for bad in (non_canonical, public[:42] + "!", public[:42] + "A=="):
        problem(api.post(credential_url(ticket), {"publicKey": bad}, format="json"), 400)
    assert not TicketCredential.objects.filter(ticket=ticket).exists()
    # The control: the same key, canonical, with or without its padding.
    padded = api.post(credential_url(ticket), {"publicKey": public + "="}, format="json")
    assert padded.status_code == 201, padded.content
