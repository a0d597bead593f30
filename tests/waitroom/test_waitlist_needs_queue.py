"""Issue 24, item 1: on a protected sale, only people in its queue may join its waitlist.

Freed units go to the waitlist before the queue, so a waitlist place taken without queueing
is a seat taken ahead of everyone who queued.  The rule is one hook in the engine's
`join_waitlist` (registered by waitroom.apps), so every door obeys it: the REST doors of
flights, events and the queue, and the flight and event page forms.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from bookings import customer_holds, lifecycle, waitlist
from bookings.models import Booking, WaitlistEntry, WaitlistStatus
from events.services import AssignmentSpec, PriceCategorySpec
from tests.api.conftest import client_for
from tests.events.factories import EventFactory, VenueFactory
from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import admission
from waitroom.models import Admission, QueueEntry
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db(transaction=True)

TWO_SEATS = "Section Stalls: rows 1-1 x seats 1-2"


def _messages(response) -> str:
    return " ".join(str(m) for m in response.wsgi_request._messages)


def assert_queue_first(response, room_id: int) -> None:
    assert response.status_code == 403, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"].endswith("/waiting-room-required")
    assert body["queueUrl"] == f"/waiting-room/{room_id}/"


@pytest.fixture
def sold_out_event(room_redis, settings):
    """A protected event with 2 seats; an admitted shopper held both through the API with
    the token the queue gave them.  Also: one more shopper admitted with them (who found it
    sold out), and one who queued after the sell-out and was told a seat is unlikely."""
    no_limits(settings)
    event = EventFactory(
        venue=VenueFactory(plan=TWO_SEATS),
        prices=(PriceCategorySpec(code="A", name="Front", price=Decimal("50.00")),),
        assignments=(AssignmentSpec("A", "Stalls"),),
    )
    t0 = timezone.now() - timedelta(seconds=5)
    sale = open_waiting_room(
        sale_id=event.sale_id, opens_at=t0, admit_per_minute=6000, max_inside=100
    )
    shopper, admitted_too, unlikely, bot = make_customers(4)
    for customer in (shopper, admitted_too):
        assert client_for(customer).post(f"/api/waiting-rooms/{sale.pk}/queue").status_code == 200
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle
    assert len(admission.admit_shoppers(room_id=sale.pk).admitted) == 2

    token = client_for(shopper).get(f"/api/waiting-rooms/{sale.pk}/queue").json()["token"]
    held = client_for(shopper).post(
        "/api/bookings",
        {"eventId": event.pk, "category": "A", "seats": ["1-1-1", "1-1-2"]},
        format="json",
        HTTP_X_WAITING_ROOM_TOKEN=token,
    )
    assert held.status_code == 201, held.json()

    assert client_for(unlikely).post(f"/api/waiting-rooms/{sale.pk}/queue").status_code == 200
    assert admission.admit_shoppers(room_id=sale.pk).admitted == []  # nothing left to admit for
    place = client_for(unlikely).get(f"/api/waiting-rooms/{sale.pk}/queue").json()
    assert place["status"] == "WAITING" and place["unlikely"], place
    return event, sale, shopper, admitted_too, unlikely, bot


def join_event_waitlist(customer, event):
    return client_for(customer).post(
        f"/api/events/{event.pk}/waitlist", {"category": "A", "partySize": 1}, format="json"
    )


def test_a_bot_that_never_queued_cannot_wait_for_a_protected_event(sold_out_event):
    event, sale, _shopper, _admitted, _unlikely, bot = sold_out_event

    assert_queue_first(join_event_waitlist(bot, event), sale.pk)

    page = Client()
    page.force_login(bot)
    form = page.post(f"/events/{event.pk}/waitlist/join/", {"fare_class": "A", "party_size": "1"})
    assert form.status_code == 302 and form["Location"] == f"/events/{event.pk}/"
    assert "join the queue" in _messages(form).lower()
    assert "only people in its queue" in _messages(form)

    assert not WaitlistEntry.objects.filter(customer=bot).exists()
    assert not QueueEntry.objects.filter(customer=bot).exists()


def test_people_in_the_queue_may_wait_and_get_the_freed_seats(sold_out_event):
    event, sale, shopper, admitted_too, unlikely, bot = sold_out_event

    first = join_event_waitlist(admitted_too, event)  # let in, found it sold out
    assert first.status_code == 201, first.json()
    second = join_event_waitlist(unlikely, event)  # told early that a seat is unlikely
    assert second.status_code == 201, second.json()
    assert_queue_first(join_event_waitlist(bot, event), sale.pk)

    # The shopper gives up: the freed seats go to the waitlist, to people who queued.
    booking = Booking.objects.get(customer=shopper)
    lifecycle.cancel_hold(booking_id=booking.pk, customer=shopper)
    offered = WaitlistEntry.objects.filter(sale_id=event.sale_id, status=WaitlistStatus.OFFERED)
    assert {e.customer_id for e in offered} == {admitted_too.pk, unlikely.pk}
    assert not Booking.objects.filter(customer=bot).exists()
    assert Admission.objects.filter(customer=admitted_too).exists()


def test_control_without_the_hook_the_bot_skips_the_queue(sold_out_event, monkeypatch):
    """The hook is what stops the bot: without it the same request waits, and the freed
    seats go to someone with no queue entry and no admission."""
    event, _sale, shopper, _admitted, _unlikely, bot = sold_out_event
    monkeypatch.setattr(waitlist, "_join_checks", {})

    joined = join_event_waitlist(bot, event)
    assert joined.status_code == 201 and joined.json()["status"] == "WAITING"
    lifecycle.cancel_hold(booking_id=Booking.objects.get(customer=shopper).pk, customer=shopper)
    assert Booking.objects.filter(customer=bot, status="HELD").exists()
    assert not QueueEntry.objects.filter(customer=bot).exists()
    assert not Admission.objects.filter(customer=bot).exists()


def test_a_bot_cannot_wait_for_a_protected_flight_by_api_or_form(room_redis, settings):
    no_limits(settings)
    flight = small_flight(rows=1, overbook=0)
    sale = protect(flight)
    insider, bot = make_customers(2)
    customer_holds.hold_seatless(
        customer=insider, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=6
    )

    api = client_for(bot).post(
        f"/api/flights/{flight.pk}/waitlist", {"fareClass": "ECONOMY", "partySize": 1}, "json"
    )
    assert_queue_first(api, sale.pk)

    page = Client()
    page.force_login(bot)
    form = page.post(
        f"/flights/{flight.pk}/waitlist/join/",
        {"fare_class": "ECONOMY", "party_size": "1", "next": "/flights/"},
    )
    assert form.status_code == 302 and form["Location"] == "/flights/"
    assert "only people in its queue" in _messages(form)
    assert not WaitlistEntry.objects.filter(customer=bot).exists()


def test_unprotected_sales_keep_an_open_waitlist(room_redis, customer):
    flight = small_flight(rows=1, overbook=0)
    other = make_customers(1)[0]
    customer_holds.hold_seatless(
        customer=other, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=6
    )
    joined = client_for(customer).post(
        f"/api/flights/{flight.pk}/waitlist", {"fareClass": "ECONOMY", "partySize": 1}, "json"
    )
    assert joined.status_code == 201, joined.json()
