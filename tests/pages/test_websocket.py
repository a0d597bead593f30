"""The seat-map websocket on a real uvicorn: same-origin pages receive versioned seat changes
after commit; other origins are refused at the handshake."""

import json

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from bookings.live import current_version

pytestmark = pytest.mark.django_db(transaction=True)


def open_seat_map(server, flight_id, origin):
    return connect(server.ws_url(f"/ws/flights/{flight_id}/seats/"), origin=origin, open_timeout=5)


def test_same_origin_page_receives_versioned_changes_after_commit(asgi_server, customer, flight):
    with open_seat_map(asgi_server, flight.pk, origin=asgi_server.url) as ws:
        start = current_version(flight.pk)
        booking = hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["14C", "14D"],
        )
        held = json.loads(ws.recv(timeout=2))
        cancel_hold(customer=customer, booking_id=booking.pk)
        released = json.loads(ws.recv(timeout=2))
    assert held == {"type": "seats", "version": start + 1, "seats": {"14C": "HELD", "14D": "HELD"}}
    assert released == {
        "type": "seats",
        "version": start + 2,
        "seats": {"14C": "AVAILABLE", "14D": "AVAILABLE"},
    }


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1:1",  # the right host on another port is another origin
        "null",
        None,  # no Origin header at all
    ],
)
def test_foreign_origins_are_refused(asgi_server, flight, origin):
    with pytest.raises(InvalidStatus) as refused:
        open_seat_map(asgi_server, flight.pk, origin=origin)
    assert refused.value.response.status_code == 403


def test_unknown_flight_is_refused(asgi_server, flight):
    with pytest.raises(InvalidStatus) as refused:
        open_seat_map(asgi_server, flight.pk + 1000, origin=asgi_server.url)
    assert refused.value.response.status_code == 403
