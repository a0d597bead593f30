"""Issue 31 item 11, the polish, on the pages as served: plurals in the pre-queue, the sandbox
checkout's state in words, a standing hold and My bookings without "seats", a surcharge with
its currency, a favicon, a route that is never flown, and the waiting room's opening in the
place's own time (the event page said 00:37 Moscow, the room 21:37 UTC)."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seatless
from languages.formatting import format_when
from payments.gateways import sandbox
from payments.models import SandboxCharge
from tests.events.factories import EventFactory, VenueFactory
from tests.factories import AirportFactory, FlightFactory
from tests.pages.test_payment_pages import hold, pay, pay_key
from tests.waitroom.room_helpers import protect, room_redis  # noqa: F401 - a fixture
from waitroom import joining

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def sandbox_gateway(settings):
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def text(response) -> str:
    assert response.status_code == 200
    return " ".join(response.content.decode().split())


def test_the_pre_queue_counts_one_person_and_opens_in_local_time(
    client,
    customer,
    room_redis,  # noqa: F811 - the fixture
):
    flight = FlightFactory(code="SK641")
    opens = timezone.now() + timedelta(hours=3)
    sale = protect(flight, opens_at=opens)
    joining.join_queue(room_id=sale.pk, customer=customer)
    client.force_login(customer)
    page = text(client.get(reverse("waitroom:queue", args=[sale.pk])))
    assert '<span id="queue-prequeue">1</span> person so far' in page
    assert "people so far" not in page
    zone = flight.origin.time_zone
    local = format_when(opens.astimezone(ZoneInfo(zone)))
    assert f"Sale opens {local} ({zone})." in page and " UTC." not in page
    ru = text(client.get(reverse("waitroom:queue", args=[sale.pk]), HTTP_ACCEPT_LANGUAGE="ru"))
    assert 'пока <span id="queue-prequeue">1</span> человек' in ru


@pytest.mark.django_db(transaction=True)
def test_the_sandbox_checkout_says_paid_not_is_succeeded(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(reverse("bookings:detail", args=[booking.pk]))))
    charge = SandboxCharge.objects.get()
    url = reverse("payments:sandbox-checkout", args=[charge.pk])
    assert 'data-testid="charge-status"' not in text(client.get(url))  # not paid yet
    sandbox.complete_checkout(charge_id=charge.pk, card_number="4242424242424242", approve=True)
    page = text(client.get(url))
    assert "This checkout is <strong>paid</strong>." in page and "is <strong>succeeded" not in page
    de = text(client.get(url, HTTP_ACCEPT_LANGUAGE="de"))
    assert "Dieser Bezahlvorgang ist <strong>bezahlt</strong>" in de


def test_a_standing_hold_speaks_of_tickets_and_my_bookings_counts_them(client, customer):
    event = EventFactory(name="Floor night")
    booking = hold_seatless(
        customer=customer, sale_id=event.sale_id, fare_class="GA-3", passengers=3
    )
    client.force_login(customer)
    page = text(client.get(reverse("bookings:detail", args=[booking.pk])))
    assert "Your tickets are held" in page and "Your seats are held" not in page
    assert "Ticket 1: name" in page and "Passenger 1 full name" not in page
    mine = text(client.get(reverse("bookings:mine")))
    assert "3 standing tickets" in mine and "—, —" not in mine
    ru = text(client.get(reverse("bookings:mine"), HTTP_ACCEPT_LANGUAGE="ru"))
    assert "3 стоячих билета" in ru


def test_a_seated_flight_hold_still_speaks_of_seats(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    assert "Your seats are held" in text(client.get(reverse("bookings:detail", args=[booking.pk])))
    assert "Seats 12A, 12B" in text(client.get(reverse("bookings:mine")))


def test_a_rows_surcharge_carries_its_currency(client, customer, flight):
    client.force_login(customer)
    url = reverse("flights:seat_picker", args=[flight.pk]) + "?fare=ECONOMY&passengers=1"
    page = text(client.get(url))
    assert '<span class="row-extra" aria-hidden="true">+€15</span>' in page
    de = text(client.get(url, HTTP_ACCEPT_LANGUAGE="de"))
    assert '<span class="row-extra" aria-hidden="true">+15 €</span>' in de  # (a no-break space)


def test_pages_link_a_favicon_and_the_root_one_is_not_a_404(client):
    page = text(client.get("/"))
    assert 'rel="icon"' in page
    answer = client.get("/favicon.ico")
    assert answer.status_code == 301 and answer["Location"].endswith("favicon.svg")


def test_a_route_never_flown_is_not_a_wrong_date(client):
    flight = FlightFactory(code="SK651")
    elsewhere = AirportFactory(code="DAD", city="Da Nang", time_zone="Asia/Ho_Chi_Minh")
    day = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date()
    query = {"origin": flight.origin.code, "date": day.isoformat(), "passengers": 1}
    flown_other_day = {**query, "destination": flight.destination.code}
    flown_other_day["date"] = (day + timedelta(days=1)).isoformat()
    assert "No flights on that day." in text(client.get("/", flown_other_day))
    never = text(client.get("/", {**query, "destination": elsewhere.code}))
    assert "No flights on that day" not in never
    assert f"We do not fly from {flight.origin.city} to Da Nang on any day." in never


def test_the_event_page_and_the_waiting_room_name_the_same_local_time(
    client,
    customer,
    room_redis,  # noqa: F811 - the fixture
):
    from waitroom.staff import open_waiting_room

    event = EventFactory(
        venue=VenueFactory(city="Moscow", time_zone="Europe/Moscow"),
        on_sale_at=timezone.now() + timedelta(hours=2),
    )
    sale = open_waiting_room(
        sale_id=event.sale_id,
        opens_at=event.on_sale_at,
        admit_per_minute=60,
        max_inside=100,
        stay_seconds=600,
    )
    client.force_login(customer)
    local = event.on_sale_at.astimezone(ZoneInfo("Europe/Moscow"))
    page = text(client.get(reverse("waitroom:queue", args=[sale.pk])))
    assert f"Sale opens {format_when(local)} (Europe/Moscow)." in page
    assert f"{local:%H:%M}" in text(client.get(f"/events/{event.pk}/"))
