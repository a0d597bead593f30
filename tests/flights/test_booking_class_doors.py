"""Nested booking classes at the front doors (docs/fare-classes.md): the hold API's optional
`bookingClass`, the seat map and search showing the cheapest open class, the picker's fare
choice, and the staff admin of classes and limits."""

from __future__ import annotations

from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse

from bookings.customer_holds import hold_seatless
from bookings.inventory import set_booking_class
from bookings.models import Booking, BookingClass, Inventory
from tests.api.conftest import client_for, problem
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"bc-{id(settings)}"},
    }


def nested_flight():
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=0))  # 12 seats
    for code, rank, limit, price in (("LAUNCH", 1, 1, "29.00"), ("SAVER", 2, 4, "59.00")):
        set_booking_class(
            sale_id=flight.sale_id, fare_class="ECONOMY", code=code, name=f"{code.title()} fare",
            rank=rank, auth_limit=limit, price=Decimal(price),
        )  # fmt: skip
    return flight


def hold_body(flight, **extra):
    return {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["1A"], **extra}


def test_the_hold_api_takes_an_optional_booking_class_and_charges_its_price():
    flight = nested_flight()
    api = client_for(UserFactory())
    response = api.post("/api/bookings", hold_body(flight, bookingClass="launch"), format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["bookingClass"], response.json()["amount"]) == ("LAUNCH", "29.00")
    plain = api.post("/api/bookings", hold_body(flight, seats=["1B"]), format="json")
    assert plain.status_code == 201
    assert (plain.json()["bookingClass"], plain.json()["amount"]) == ("", "100.00")


def test_a_closed_class_is_409_sold_out_and_an_unknown_one_400_and_nothing_changes():
    flight = nested_flight()
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="LAUNCH",
    )  # fmt: skip
    api = client_for(UserFactory())
    before = Booking.objects.count()
    closed = problem(
        api.post("/api/bookings", hold_body(flight, bookingClass="LAUNCH"), format="json"), 409
    )
    assert closed["type"].endswith("/sold-out") and closed["bookingClass"] == "LAUNCH"
    unknown = problem(
        api.post("/api/bookings", hold_body(flight, bookingClass="NOPE"), format="json"), 400
    )
    assert unknown["type"].endswith("/booking-class-not-found")
    assert Booking.objects.count() == before
    assert Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY").held == 1


def test_the_seat_map_api_lists_the_classes_and_the_cheapest_open_one():
    flight = nested_flight()
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="LAUNCH",
    )  # fmt: skip
    fares = client_for().get(f"/api/flights/{flight.pk}/seats").json()["fares"]
    economy = next(f for f in fares if f["fareClass"] == "ECONOMY")
    assert economy["bookingClasses"] == [
        {"code": "LAUNCH", "name": "Launch fare", "price": "29.00", "available": 0},
        {"code": "SAVER", "name": "Saver fare", "price": "59.00", "available": 3},
    ]
    assert economy["cheapestOpen"] == {"bookingClass": "SAVER", "price": "59.00", "available": 3}
    assert economy["price"] == "100.00"  # the fare class's own, as before


def test_search_and_picker_offer_the_cheapest_open_class_and_the_page_holds_it(client):
    flight = nested_flight()
    customer = UserFactory()
    search = client.get(
        reverse("flights:search"),
        {
            "origin": flight.origin.code,
            "destination": flight.destination.code,
            "date": flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date(),
            "passengers": 1,
        },
    )
    assert "Launch fare" in search.text and "29.00" in search.text
    client.force_login(customer)
    picker = client.get(
        reverse("flights:seat_picker", args=[flight.pk]) + "?fare=ECONOMY&passengers=2"
    )
    # Two passengers do not fit the launch fare's one unit: it is closed for them.
    assert 'name="booking_class" value="LAUNCH" data-price="29.00" disabled' in picker.text
    assert 'value="SAVER" data-price="59.00" checked' in picker.text
    response = client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {
            "fare_class": "ECONOMY", "passengers": 2, "seats": ["2A", "2B"],
            "names": ["Ana Lima", "Bo Chen"], "booking_class": "SAVER",
        },
    )  # fmt: skip
    assert response.status_code == 302
    booking = Booking.objects.get(customer=customer)
    assert (booking.booking_class, booking.amount) == ("SAVER", Decimal("118.00"))


def test_staff_add_and_change_classes_in_the_admin(client, staff_user):
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=0))
    client.force_login(staff_user)
    add = client.post(
        reverse("admin:bookings_bookingclass_add"),
        {
            "flight": flight.pk, "fare_class": "ECONOMY", "code": "launch", "name": "Launch",
            "rank": 1, "auth_limit": 3, "price": "19.00",
        },
    )  # fmt: skip
    assert add.status_code == 302, add.content[:2000]
    launch = BookingClass.objects.get(sale_id=flight.sale_id)
    assert (launch.code, launch.auth_limit, launch.price) == ("LAUNCH", 3, Decimal("19.00"))
    too_high = client.post(
        reverse("admin:bookings_bookingclass_change", args=[launch.pk]),
        {"name": "Launch", "auth_limit": 13, "price": "19.00"},
        follow=True,
    )
    assert "between the lower classes" in too_high.text
    launch.refresh_from_db()
    assert launch.auth_limit == 3
    listing = client.get(reverse("admin:bookings_bookingclass_changelist"))
    assert listing.status_code == 200 and "LAUNCH" in listing.text
