"""Partner payloads name what was sold in the catalogue's own ids (issue 24, item 13): the
engine's `saleId` stays, and `flightId` or `eventId` is beside it."""

import pytest

from bookings.customer_holds import hold_seatless
from bookings.models import Inventory
from kernel.outbox import relay_outbox
from partners.models import WebhookDelivery
from partners.services import create_endpoint, delivery_body
from tests.bookings.confirming import confirm, hold_and_confirm
from tests.events.factories import EventFactory

pytestmark = pytest.mark.django_db


def test_an_event_booking_reaches_partners_with_its_event_id_and_sale_id(partner, receiver):
    event = EventFactory()
    create_endpoint(owner=partner, url=receiver.url, event_types=["booking.confirmed"])
    standing = Inventory.objects.get(sale_id=event.sale_id, fare_class__startswith="GA-")
    booking = hold_seatless(
        customer=partner, sale_id=event.sale_id, fare_class=standing.fare_class, passengers=2
    )
    confirm(booking)
    relay_outbox()
    data = WebhookDelivery.objects.get().data
    assert data["eventId"] == event.pk
    assert data["saleId"] == event.sale_id
    assert "flightId" not in data
    assert b'"eventId":%d' % event.pk in delivery_body(WebhookDelivery.objects.get())


def test_a_flight_booking_keeps_flight_id_and_now_also_carries_sale_id(partner, flight, receiver):
    create_endpoint(owner=partner, url=receiver.url, event_types=["booking.confirmed"])
    hold_and_confirm(partner, flight)
    relay_outbox()
    data = WebhookDelivery.objects.get().data
    assert data["flightId"] == flight.pk
    assert data["saleId"] == flight.sale_id
    assert "eventId" not in data
