"""Issue 31 item 21: the schema and the server agree on the strings a request body may carry.

Every string property of every JSON request body in the live schema is walked.  For each, the
schema must forbid a NUL character, and where it forbids the empty string too, the server must
refuse both with a 400 problem naming that very field.  The control: a good value (and "" where
the schema allows it) is not refused for that field, so the 400s are the field's own."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.utils.timezone import now as django_now

from bookings.customer_holds import hold_seats
from kernel.web.fields import NON_NEGATIVE_PRICE_PATTERN
from tests.api.conftest import client_for, problem
from tests.bookings.confirming import hold_and_confirm
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory
from tests.partners.pinning import HOST, rebinding_resolver
from waitroom.presale import issue_presale_codes
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db

# A value each kind of string accepts, as far as its own field is concerned.
GOOD_BY_PATTERN = {
    r"^[0-9]{1,3}[A-Za-z]$": "12A",
    r"^[A-Za-z]{3}$": "EUR",
    r"^-?(?:\d{1,10}(?:\.\d{0,2})?|\.\d{1,2})$": "10.00",
    NON_NEGATIVE_PRICE_PATTERN: "10.00",
    r"^[A-Za-z0-9-]+$": "ECONOMY",  # GA-3 too: test_class_codes_keep_to_their_pattern
    r"^[\w.@+-]+$": "ana.lima",
}
GOOD_BY_FORMAT = {
    "date-time": "2026-01-01T10:00:00Z",
    "uri": f"https://{HOST}/hook",
    "email": "ana@example.com",
}


def _walk(schema, components, path, out):
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    branches = schema.get("oneOf") or schema.get("anyOf") or schema.get("allOf")
    if branches:
        if all(b.get("type") == "string" for b in branches):  # a blank-or-pattern choice
            out.append((path, {"oneOf": branches}))
            return
        for branch in branches:
            _walk(branch, components, path, out)
    for name, prop in schema.get("properties", {}).items():
        if not prop.get("readOnly"):
            _walk(prop, components, (*path, name), out)
    if schema.get("type") == "array":
        _walk(schema["items"], components, (*path, "[]"), out)
    elif schema.get("type") == "string":
        out.append((path, schema))


def _accepts(schema, value: str) -> bool:
    """Whether the string `schema` (with `oneOf` branches) lets `value` through."""
    if "oneOf" in schema:
        return sum(_accepts(branch, value) for branch in schema["oneOf"]) == 1
    if "enum" in schema:
        return value in schema["enum"]
    if value == "" and schema.get("format") in ("date-time", "uri", "email"):
        return False
    if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 10**9):
        return False
    return "pattern" not in schema or re.search(schema["pattern"], value) is not None


def _good(schema) -> str:
    if "oneOf" in schema:
        return next(_good(b) for b in schema["oneOf"] if b.get("maxLength", 1) > 0)
    if "enum" in schema:
        return schema["enum"][0]
    value = GOOD_BY_PATTERN.get(schema.get("pattern", "")) or GOOD_BY_FORMAT.get(
        schema.get("format", ""), "Ana"
    )
    return value.ljust(schema.get("minLength", 0), "A")


def _body(path: tuple[str, ...], value):
    for part in reversed(path):
        value = [value] if part == "[]" else {part: value}
    return value


def _field_name(path: tuple[str, ...]) -> str:
    return ".".join(p for p in path if p != "[]")


def _refused_fields(response) -> set[str]:
    """The fields a 400 names, as dotted paths without indexes ("scans.localId")."""
    if response.status_code != 400:
        return set()
    return {re.sub(r"\[\d+\]", "", p["name"]) for p in response.json().get("invalidParams", [])}


@pytest.fixture
def request_strings(anon):
    openapi = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = openapi["components"]["schemas"]
    found = []
    for url, operations in openapi["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                out = []
                _walk(content["application/json"]["schema"], components, (), out)
                found += [(method, url, path, schema) for path, schema in out]
    return found


@pytest.fixture
def world(monkeypatch):
    """A superuser (every permission) owning a held and a confirmed booking, with a flight, an
    event, a waiting room, a gate and a webhook endpoint for path ids to name."""
    rebinding_resolver(monkeypatch, "93.184.216.34")  # the partner's host, public, offline
    user = UserFactory(is_staff=True, is_superuser=True)
    client = client_for(user)
    flight = FlightFactory()
    held = hold_seats(
        customer=user, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    confirmed = hold_and_confirm(user, flight, seats=["14A"], names=["Ana Lima"])
    room = open_waiting_room(
        sale_id=FlightFactory().sale_id,
        opens_at=django_now() - timedelta(minutes=1),
        admit_per_minute=10,
        max_inside=10,
    )
    gate = client.post(
        "/api/gates",
        {"flightId": flight.pk, "name": "Gate 1", "gateTime": django_now().isoformat()},
        format="json",
    )
    assert gate.status_code == 201, gate.content[:300]
    endpoint = client.post(
        "/api/partners/webhooks",
        {"url": "https://hooks.partner.test/hook", "eventTypes": ["booking.confirmed"]},
        format="json",
    )
    assert endpoint.status_code == 201, endpoint.content[:300]
    return client, {
        "bookingId": held.pk,
        "ticketId": confirmed.tickets.values_list("pk", flat=True).first(),
        "flightId": flight.pk,
        "eventId": EventFactory().pk,
        "venueId": EventFactory().venue_id,
        "roomId": room.pk,
        # A real presale code: an unknown one is refused for what it is, not for its form.
        "presaleCode": issue_presale_codes(room_id=room.pk, count=1, uses_allowed=100)[0].code,
        "deviceId": gate.json().get("deviceId"),
        "endpointId": endpoint.json().get("endpointId"),
        "confirmed": confirmed.pk,
        # No volunteer offer exists: the body is validated before the offer is looked up.
        "offerId": 999_999,
    }


def _send(client, ids, method, url, body):
    if "{ticketId}" in url:
        url = url.replace("{bookingId}", str(ids["confirmed"]))
    for name, value in ids.items():
        url = url.replace(f"{{{name}}}", str(value))
    return getattr(client, method)(url, body, format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


def test_every_request_string_forbids_nul_in_the_schema(request_strings):
    assert len(request_strings) > 25
    lax = [(m, u, p) for m, u, p, s in request_strings if _accepts(s, _good(s)[:1] + "\x00")]
    assert not lax, f"schema lets a NUL through: {lax}"
    # Control: each good value is one the schema itself accepts.
    refused = [(m, u, p) for m, u, p, s in request_strings if not _accepts(s, _good(s))]
    assert not refused, refused


@pytest.mark.django_db(transaction=True)  # paying calls the gateway outside any transaction
def test_the_server_refuses_what_the_schema_forbids(request_strings, sandbox_payments, world):
    client, ids = world
    unexpected = []
    for method, url, path, schema in request_strings:
        name, good = _field_name(path), _good(schema)
        good = ids.get(name, good) if isinstance(ids.get(name), str) else good
        control = _send(client, ids, method, url, _body(path, good))
        # Whether the path reached the serializer at all, the 400s below prove.
        if name in _refused_fields(control):
            unexpected.append((method, url, name, "control", control.status_code))
            continue
        bad = [good[:1] + "\x00" + good[1:]]
        if _accepts(schema, ""):
            blank = _send(client, ids, method, url, _body(path, ""))
            if name in _refused_fields(blank):  # the schema allows "": so must the server
                unexpected.append((method, url, name, "blank refused", blank.status_code))
        else:
            bad.append("")
        for value in bad:
            response = _send(client, ids, method, url, _body(path, value))
            if name not in _refused_fields(response):
                unexpected.append((method, url, name, repr(value), response.status_code))
            else:
                problem(response, 400)
    assert not unexpected, "\n".join(map(str, unexpected))


def test_class_codes_keep_to_their_pattern(api, flight, request_strings):
    """`fareClass` is documented as letters, digits and hyphens (GA-3 included), and the server
    refuses anything else before looking it up; a known code is held (the control)."""
    codes = [  # a flight's own waitlist takes an enum of its fare classes
        s
        for *_, p, s in request_strings
        if p[-1:] in (("fareClass",), ("category",)) and "enum" not in s
    ]
    assert len(codes) == 5  # holds, best available, and the three waitlists' bodies
    assert all(_accepts(s, "GA-3") and not _accepts(s, "GA 3") for s in codes)
    for code in (" ECONOMY", "ECO NOMY", "ECONOMY\x00", "É"):
        body = problem(
            api.post(
                "/api/bookings",
                {"flightId": flight.pk, "fareClass": code, "seats": ["12A"]},
                format="json",
            ),
            400,
        )
        assert {p["name"] for p in body["invalidParams"]} == {"fareClass"}, code
    held = api.post(
        "/api/bookings",
        {
            "flightId": flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12A"],
            "passengerNames": ["A B"],
            "exitRowConfirmed": True,
        },
        format="json",
    )
    assert held.status_code == 201, held.content[:300]
