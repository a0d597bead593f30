"""Issue 31, item 17: a token-only partner opens the queue websocket with a short-lived
ticket from a REST call; a browser's handshake still needs an Origin of this site."""

import asyncio
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
REFUSAL_ENDS_WITHIN = 5


@pytest.fixture
def room(flight):
    return open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() + timedelta(hours=1),
        admit_per_minute=10,
        max_inside=10,
    )


def handshake_scope(path: str, *, origin: str | None) -> dict:
    """The ASGI scope of a websocket handshake to `path` (with its query), from `origin`."""
    headers = [(b"host", b"testserver")]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    path, _, query = path.partition("?")
    return {
        "type": "websocket",
        "path": path,
        "query_string": query.encode(),
        "headers": headers,
        "subprotocols": [],
    }


def connect(path: str, *, origin: str | None = None) -> tuple[bool, dict | None]:
    # asgiref's communicator: channels.testing imports daphne, which is not installed.
    scope = handshake_scope(path, origin=origin)

    async def run():
        socket = ApplicationCommunicator(APP, scope)
        await socket.send_input({"type": "websocket.connect"})
        answer = await socket.receive_output(timeout=5)
        if answer["type"] != "websocket.accept":
            # As a server does after a refused handshake: the client is gone.
            await socket.send_input({"type": "websocket.disconnect", "code": 1006})
            await socket.wait(timeout=REFUSAL_ENDS_WITHIN)
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


def test_an_inactive_accounts_valid_ticket_is_refused_by_the_consumer(customer, room, settings):
    # The in-memory layer: a consumer ends only once its channel-layer receive is cancelled,
    # which channels_redis lets finish its BRPOP first (up to 5 s).
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    ticket = ticket_for(customer, room)["websocketUrl"]
    customer.is_active = False
    customer.save(update_fields=["is_active"])
    assert connect(ticket) == (False, None)


def ends_by_itself_after_refusing(app, path: str, *, origin: str | None) -> bool:
    """Whether `app`, having refused the handshake, returns without waiting for the client's
    disconnect (and so leaves no task behind: the hang of CI of 0bd165e)."""
    scope = handshake_scope(path, origin=origin)

    async def run() -> bool:
        socket = ApplicationCommunicator(app, scope)
        await socket.send_input({"type": "websocket.connect"})
        assert (await socket.receive_output(timeout=5)) == {"type": "websocket.close"}
        # Not `socket.wait`: on its timeout it cancels the app and returns as if it had ended.
        ended, _ = await asyncio.wait({socket.future}, timeout=0.5)
        if not ended:
            await socket.send_input({"type": "websocket.disconnect", "code": 1006})
            await socket.wait(timeout=REFUSAL_ENDS_WITHIN)
        return bool(ended)

    return async_to_sync(run)()


def refused_handshakes(customer, room) -> list[tuple[str, str | None]]:
    ticket = ticket_for(customer, room)["websocketUrl"]
    return [
        (ticket, "https://evil.example"),
        (f"/ws/waiting-room/{room.pk}/", None),
        (f"/ws/waiting-room/{room.pk}/?ticket=forged", None),
        (ticket.replace(f"/{room.pk}/", f"/{room.pk + 1}/"), None),
    ]


def test_the_origin_check_refuses_without_opening_anything(customer, room, monkeypatch):
    """Another site's page, no ticket, a forged ticket, another room's ticket and (below) an
    expired one are refused before any consumer or channel-layer channel exists."""
    for path, origin in refused_handshakes(customer, room):
        assert ends_by_itself_after_refusing(APP, path, origin=origin), (path, origin)
    expired = ticket_for(customer, room)["websocketUrl"]
    monkeypatch.setattr(socket_tickets, "TICKET_SECONDS", -1)
    assert ends_by_itself_after_refusing(APP, expired, origin=None)


def test_control_a_consumer_that_refuses_waits_for_the_disconnect(customer, room, settings):
    """channels' WebsocketDenier, a consumer, refuses and then listens on its channel until
    the client's disconnect: the check above tells the two apart."""
    from channels.security.websocket import WebsocketDenier

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    path, origin = refused_handshakes(customer, room)[0]
    assert not ends_by_itself_after_refusing(WebsocketDenier(), path, origin=origin)


def test_a_ticket_needs_the_api_token(anon, room):
    response = anon.post(f"/api/waiting-rooms/{room.pk}/queue/ticket")
    assert response.status_code == 401


def test_the_schema_documents_the_ticket(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = [p for p in schema["paths"] if p.endswith("/queue/ticket")]
    assert paths, list(schema["paths"])
    op = schema["paths"][paths[0]]["post"]
    assert "201" in op["responses"] and "?ticket=" in op["description"]
