"""An open event seat map hears a plan edit (issue 29, item 5): after staff save a plan on
sale, the event's websocket (a real uvicorn) delivers a `plan` message with the next version,
the one the page then reloads at (static/js/live-seats.js); a refused save sends nothing."""

import json

import pytest
from websockets.sync.client import connect

from bookings.customer_holds import hold_seats
from bookings.live import current_version
from events.plan_drawn import venue_drawing
from events.venues import save_drawn_plan
from kernel.errors import DomainError
from tests.api.test_venue_plan_api import on_sale
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def flag_seat(event, number: int) -> dict:
    drawing = venue_drawing(venue=event.venue)
    drawing["sections"][0]["seats"][number - 1]["accessible"] = True
    return drawing


def test_an_open_seat_map_hears_the_plan_change(asgi_server):
    event = on_sale()
    url = asgi_server.ws_url(f"/ws/events/{event.pk}/seats/")
    with connect(url, origin=asgi_server.url, open_timeout=5) as ws:
        start = current_version(event.sale_id)
        save_drawn_plan(venue=event.venue, drawing=flag_seat(event, 2))
        message = json.loads(ws.recv(timeout=5))
    assert message == {"type": "plan", "version": start + 1, "seats": {}}


def test_control_a_refused_save_sends_nothing_and_a_hold_still_does(asgi_server):
    event = on_sale()
    hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"]
    )
    drawing = venue_drawing(venue=event.venue)
    drawing["sections"][0]["seats"].pop(0)  # the held seat
    url = asgi_server.ws_url(f"/ws/events/{event.pk}/seats/")
    with connect(url, origin=asgi_server.url, open_timeout=5) as ws:
        with pytest.raises(DomainError):
            save_drawn_plan(venue=event.venue, drawing=drawing)
        hold_seats(
            customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-2"]
        )
        message = json.loads(ws.recv(timeout=5))
    assert message["type"] == "seats" and message["seats"] == {"1-1-2": "HELD"}
