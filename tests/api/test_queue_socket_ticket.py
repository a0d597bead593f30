"""Issue 31, item 17: a token-only partner opens the queue websocket with a short-lived
ticket from a REST call; a browser's handshake still needs an Origin of this site."""

import json
from datetime import timedelta
from urllib.parse import quote

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from channels.routing import URLRouter
from django.utils import timezone

from config.ws_origin import SameOriginValidator
from tests.api.conftest import client_for
from waitroom import socket_tickets
from waitroom.routing import websocket_urlpatterns
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db(transaction=True)

# The websocket side of config/asgi.py, for the waiting room's route.
APP = SameOriginValidator(URLRouter(websocket_urlpatterns))


@pytest.fixture
def room(flight):
    return open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() + timedelta(hours=1),
        admit_per_minute=10,
        max_inside=10,
    )


def connect(path: str, *, origin: str | None = None) -> tuple[bool, dict | None]:
    headers = [(b"host", b"testserver")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))

    # asgiref's communicator: channels.testing imports daphne, which is not installed.
    path, _, query = path.partition("?")
    scope = {
        "type": "websocket",
        "path": path,
        "query_string": query.encode(),
        "headers": headers,
        "subprotocols": [],
    }

    async def run():
        socket = ApplicationCommunicator(APP, scope)
        await socket.send_input({"type": "websocket.connect"})
        answer = await socket.receive_output(timeout=5)
        if answer["type"] != "websocket.accept":
            return False, None
        first = await socket.receive_output(timeout=5)
        await socket.send_input({"type": "websocket.disconnect", "code": 1000})
        await socket.wait(timeout=5)
        return True, json.loads(first["text"])

    return async_to_sync(run)()


def ticket_for(customer, room) -> dict:
    response = client_for(customer).post(f"/api/waiting-rooms/{room.pk}/queue/ticket")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_token_client_opens_the_queue_socket_with_a_ticket(customer, room):
    answer = ticket_for(customer, room)
    assert answer["websocketUrl"].startswith(f"/ws/waiting-room/{room.pk}/?ticket=")
    assert answer["expiresAt"].endswith("Z")

    connected, first = connect(answer["websocketUrl"])

    assert connected
    assert first["status"] == "NOT_JOINED" and first["saleId"] == room.pk


def test_without_a_ticket_a_handshake_without_origin_is_refused(customer, room):
    assert connect(f"/ws/waiting-room/{room.pk}/") == (False, None)


def test_a_forged_or_foreign_ticket_is_refused(customer, room, flight):
    assert connect(f"/ws/waiting-room/{room.pk}/?ticket=forged") == (False, None)
    other_room_ticket, _ = socket_tickets.issue_ticket(room_id=room.pk + 1, customer_id=customer.pk)
    path = f"/ws/waiting-room/{room.pk}/?ticket={quote(other_room_ticket)}"
    assert connect(path) == (False, None)


def test_an_expired_ticket_is_refused(customer, room, monkeypatch):
    ticket = ticket_for(customer, room)["websocketUrl"]
    monkeypatch.setattr(socket_tickets, "TICKET_SECONDS", -1)
    assert connect(ticket) == (False, None)


def test_a_page_of_another_site_is_refused_even_with_a_ticket(customer, room):
    ticket = ticket_for(customer, room)["websocketUrl"]
    assert connect(ticket, origin="https://evil.example") == (False, None)


def test_a_ticket_needs_the_api_token(anon, room):
    response = anon.post(f"/api/waiting-rooms/{room.pk}/queue/ticket")
    assert response.status_code == 401


def test_the_schema_documents_the_ticket(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = [p for p in schema["paths"] if p.endswith("/queue/ticket")]
    assert paths, list(schema["paths"])
    op = schema["paths"][paths[0]]["post"]
    assert "201" in op["responses"] and "?ticket=" in op["description"]
