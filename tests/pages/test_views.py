"""Customer pages through the Django test client: what they show, and that bad input gives a
message and changes nothing."""

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from flights.models import FareClass, FareInventory, Flight, FlightStatus, Seat, SeatStatus
from flights.services import check_inventory
from tests.factories import AirportFactory, FlightFactory, UserFactory

pytestmark = pytest.mark.django_db


def picker_url(flight, fare="ECONOMY", passengers=2):
    return (
        reverse("flights:seat_picker", args=[flight.pk]) + f"?fare={fare}&passengers={passengers}"
    )


def hold_post(client, flight, seats, names, fare="ECONOMY", passengers=None):
    return client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {
            "fare_class": fare,
            "passengers": passengers or len(seats),
            "seats": seats,
            "names": names,
            "exit_row_confirmed": "on",  # rows 12-13 are exit rows (tests/storefront)
        },
        follow=True,
    )


def state(flight):
    inv = FareInventory.objects.get(sale=flight.sale, fare_class=FareClass.ECONOMY)
    return (
        inv.held,
        inv.sold,
        Booking.objects.count(),
        list(
            Seat.objects.filter(sale=flight.sale)
            .exclude(status=SeatStatus.AVAILABLE)
            .values_list("seat_no", "status")
        ),
    )


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


# --- search --------------------------------------------------------------------------------


def test_search_shows_local_airport_times_fares_prices_and_seats_left(client):
    fra = AirportFactory(
        code="FRA",
        name="Frankfurt Airport",
        city="Frankfurt",
        country="DE",
        time_zone="Europe/Berlin",
    )
    sgn = AirportFactory(
        code="SGN", name="Tan Son Nhat", city="Ho Chi Minh City", time_zone="Asia/Ho_Chi_Minh"
    )
    local_departure = datetime(2031, 1, 15, 23, 30, tzinfo=ZoneInfo("Europe/Berlin"))  # 22:30 UTC
    flight = FlightFactory(
        code="SK777",
        origin=fra,
        destination=sgn,
        departure_at=local_departure,
        arrival_at=local_departure + timedelta(hours=12, minutes=5),
    )
    FlightFactory(
        code="SK778",
        origin=fra,
        destination=sgn,  # next local day: not listed
        departure_at=local_departure + timedelta(hours=1),
        arrival_at=local_departure + timedelta(hours=13),
    )
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="BUSINESS", seat_numbers=["1A"]
    )

    response = client.get(
        reverse("flights:search"),
        {"origin": "FRA", "destination": "SGN", "date": "2031-01-15", "passengers": 2},
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert "Frankfurt — Frankfurt Airport (FRA)" in html  # airports by name in the form
    assert "SK777" in html and "SK778" not in html
    # 23:30 in Frankfurt (CET) = 22:30 UTC; 12h05 later is 10:35 UTC = 17:35 next day in Saigon.
    assert re.search(r'class="time">23:30</span>\s*<span class="zone">CET', html)
    assert re.search(
        r'class="time">17:35</span>\s*<span class="zone">\+07</span>\s*<sup[^>]*>\+1', html
    )
    assert "12 h 05 min" in html
    assert "€89.00" in html and "€420.00" in html  # money as the locale writes it (en)
    assert "11 seats left" in html  # 12 business seats, one held
    assert "168 seats left" in html  # economy: the overbooking margin has no seat to pick
    assert picker_url(flight, "ECONOMY", 2).replace("&", "&amp;") in html


def test_search_with_bad_input_shows_a_message(client, flight):
    response = client.get(
        reverse("flights:search"),
        {"origin": "SGN", "destination": "SGN", "date": "not-a-date", "passengers": 12},
    )
    text = " ".join(messages_of(response))
    assert "Please correct the search" in text
    assert "different from the origin" in text
    assert "valid date" in text
    assert "less than or equal to 9" in text
    assert response.context["offers"] is None


def test_search_hides_fares_too_small_for_the_party(client):
    flight = FlightFactory()
    day = flight.departure_at.astimezone(ZoneInfo("Asia/Ho_Chi_Minh")).date()
    response = client.get(
        reverse("flights:search"),
        {"origin": "SGN", "destination": "HAN", "date": day.isoformat(), "passengers": 9},
    )
    html = response.content.decode()
    assert "Choose seats" in html  # economy fits 9
    FareInventory.objects.filter(sale=flight.sale, fare_class=FareClass.BUSINESS).update(held=5)
    html = client.get(
        reverse("flights:search"),
        {"origin": "SGN", "destination": "HAN", "date": day.isoformat(), "passengers": 9},
    ).content.decode()
    assert "Not enough seats for 9" in html


# --- seat picker ---------------------------------------------------------------------------


def test_seat_picker_draws_the_cabin_row_by_row_with_labels(client, customer, flight):
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["7C"]
    )
    client.force_login(customer)
    response = client.get(picker_url(flight))
    html = response.content.decode()
    assert response.status_code == 200
    assert html.count('role="group" aria-label="Row ') == 31
    assert html.count('class="aisle"') == 32  # one per row, one in the header
    assert "Business cabin" in html and "Economy cabin" in html
    assert 'aria-label="Seat 12A, window, extra legroom, plus €15.00, free"' in html
    assert re.search(r'aria-label="Seat 7C, aisle, taken"\s*disabled', html)
    assert re.search(r'aria-label="Seat 1A, window, business only"\s*disabled', html)
    assert 'aria-label="Seat 20B, middle, free"' in html
    assert html.count('name="names"') == 2
    assert f'data-ws-path="/ws/flights/{flight.pk}/seats/"' in html
    assert "Hold these seats" in html


def test_seat_picker_for_anonymous_visitors_offers_login(client, flight):
    html = client.get(picker_url(flight)).content.decode()
    assert "Log in to hold seats" in html and "Hold these seats" not in html


@pytest.mark.parametrize(
    "query",
    [
        "?fare=FIRST&passengers=2",
        "?fare=ECONOMY&passengers=0",
        "?fare=ECONOMY&passengers=10",
        "?passengers=x",
    ],
)
def test_seat_picker_with_a_bad_query_redirects_with_a_message(client, flight, query):
    response = client.get(reverse("flights:seat_picker", args=[flight.pk]) + query, follow=True)
    assert response.redirect_chain[-1][0] == reverse("flights:search")
    assert any("Choose a fare class and a party size" in m for m in messages_of(response))


def test_seat_picker_refuses_a_departed_flight(client):
    flight = FlightFactory()
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.DEPARTED)
    response = client.get(picker_url(flight), follow=True)
    assert any("can no longer be booked" in m for m in messages_of(response))


def test_unknown_flight_is_a_friendly_404(client):
    response = client.get(picker_url(type("F", (), {"pk": 999999})()))
    assert response.status_code == 404
    assert "We could not find that page" in response.content.decode()


def test_seat_map_snapshot_reports_statuses_and_version(client, customer, flight):
    hold_seats(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["9A"])
    body = client.get(reverse("flights:seat_map", args=[flight.pk])).json()
    assert body["flightId"] == flight.pk
    assert isinstance(body["version"], int)
    assert len(body["seats"]) == 180
    assert body["seats"]["9A"] == "HELD" and body["seats"]["9B"] == "AVAILABLE"
    # An expired hold not yet swept is shown free: the next hold takes it over.
    Seat.objects.filter(sale=flight.sale, seat_no="9A").update(
        held_until=timezone.now() - timedelta(seconds=1)
    )
    assert (
        client.get(reverse("flights:seat_map", args=[flight.pk])).json()["seats"]["9A"]
        == "AVAILABLE"
    )


# --- holds ---------------------------------------------------------------------------------


def test_hold_from_the_picker_lands_on_the_hold_page(client, customer, flight):
    client.force_login(customer)
    response = hold_post(client, flight, ["12B", "12A"], ["Ana Lima", "Bo Chen"])
    booking = Booking.objects.get(customer=customer)
    assert response.redirect_chain[-1][0] == reverse("bookings:detail", args=[booking.pk])
    html = response.content.decode()
    assert "Your seats are held" in html
    assert booking.expires_at.isoformat()[:19] in html  # the countdown's target
    assert "Ana Lima" in html and "Bo Chen" in html and "€208.00" in html
    assert 'id="countdown"' in html and "js/countdown.js" in html
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.parametrize(
    ("seats", "names", "passengers", "expected"),
    [
        (["12A"], ["Ana"], 2, "Pick 2 seats (you picked 1)"),
        (["12A", "12B"], ["Ana", ""], 2, "Enter the full name of every passenger"),
        (["12A", "12A"], ["Ana", "Bo"], 2, "listed more than once"),
        (["99Z", "12B"], ["Ana", "Bo"], 2, "Not a seat number: 99Z"),
        (["1A", "12B"], ["Ana", "Bo"], 2, "not sold in ECONOMY"),
        (["12A", "12B"], ["A" * 121, "Bo"], 2, "at most 120 characters"),
    ],
)
def test_bad_hold_input_shows_a_message_and_changes_nothing(
    client, customer, flight, seats, names, passengers, expected
):
    client.force_login(customer)
    before = state(flight)
    response = hold_post(client, flight, seats, names, passengers=passengers)
    assert any(expected in m for m in messages_of(response)), messages_of(response)
    assert response.redirect_chain[-1][0] == picker_url(flight, "ECONOMY", passengers)
    assert state(flight) == before


def test_seat_just_taken_message(client, customer, flight):
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    client.force_login(customer)
    before = state(flight)
    response = hold_post(client, flight, ["12A", "12B"], ["Ana", "Bo"])
    assert messages_of(response) == [
        "Seat just taken. Seat 12A was just taken by someone else. Please pick another seat."
    ]
    assert state(flight) == before


def test_sold_out_message(client, customer, flight):
    FareInventory.objects.filter(sale=flight.sale, fare_class=FareClass.ECONOMY).update(
        capacity=0, overbook_limit=1
    )
    client.force_login(customer)
    before = state(flight)
    response = hold_post(client, flight, ["12A", "12B"], ["Ana", "Bo"])
    assert messages_of(response) == ["Sold out. Economy is sold out on this flight."]
    assert state(flight) == before


def test_anonymous_hold_goes_to_login_and_holds_nothing(client, flight):
    response = client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {"fare_class": "ECONOMY", "passengers": 1, "seats": ["12A"], "names": ["Ana"]},
    )
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    assert Booking.objects.count() == 0


def test_hold_page_is_only_for_its_owner(client, customer, other_customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["7C"]
    )
    client.force_login(other_customer)
    assert client.get(reverse("bookings:detail", args=[booking.pk])).status_code == 404
    response = client.post(reverse("bookings:hold_cancel", args=[booking.pk]), follow=True)
    assert any("Booking not found" in m for m in messages_of(response))
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD


def test_lapsed_hold_page_shows_expiry_without_a_pay_button(client, customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["7C"]
    )
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(customer)
    html = client.get(reverse("bookings:detail", args=[booking.pk])).content.decode()
    assert "Your hold has expired" in html
    assert 'id="countdown"' not in html and "Give up this hold" not in html


# --- my bookings and cancelling a hold -----------------------------------------------------


def test_my_bookings_lists_only_mine_with_status(client, customer, other_customer, flight):
    mine = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["5A", "5B"]
    )
    hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["6A"]
    )
    client.force_login(customer)
    html = client.get(reverse("bookings:mine")).content.decode()
    assert f'data-booking="{mine.pk}" data-status="HELD"' in html
    assert html.count("data-booking=") == 1
    assert "5A, 5B" in html and "€208.00" in html


def test_cancel_hold_frees_the_seats(client, customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["5A", "5B"]
    )
    client.force_login(customer)
    response = client.post(reverse("bookings:hold_cancel", args=[booking.pk]), follow=True)
    assert messages_of(response) == ["Hold cancelled. Seats 5A, 5B are free again."]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    assert Seat.objects.filter(sale=flight.sale, status=SeatStatus.HELD).count() == 0
    assert check_inventory(sale_id=flight.sale_id) == []
    # Twice: a clear message, nothing changes.
    response = client.post(reverse("bookings:hold_cancel", args=[booking.pk]), follow=True)
    assert any("cannot be given up" in m for m in messages_of(response))


def test_cancelling_an_expired_hold_says_hold_expired(client, customer, flight):
    from bookings.lifecycle import expire_holds

    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["5A"]
    )
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expire_holds()
    client.force_login(customer)
    response = client.post(reverse("bookings:hold_cancel", args=[booking.pk]), follow=True)
    assert messages_of(response) == [
        "Hold expired. This hold had already expired; its seats are released."
    ]


def test_pages_need_login(client, flight):
    for url in (reverse("bookings:mine"), reverse("bookings:detail", args=[1])):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


# --- accounts and error pages --------------------------------------------------------------


def test_sign_up_logs_in_and_log_out_logs_out(client):
    response = client.post(
        reverse("accounts:signup"),
        {
            "username": "traveller",
            "email": "traveller@example.com",
            "password1": "seats-never-twice-42",
            "password2": "seats-never-twice-42",
        },
        follow=True,
    )
    assert "Welcome, traveller" in " ".join(messages_of(response))
    assert response.context["user"].is_authenticated
    response = client.post(reverse("logout"), follow=True)
    assert not response.context["user"].is_authenticated


def test_sign_up_with_bad_input_shows_errors_and_creates_nobody(client):
    response = client.post(
        reverse("accounts:signup"), {"username": "traveller", "password1": "x", "password2": "y"}
    )
    assert "The two password fields didn\u2019t match." in response.content.decode()
    assert not get_user_model().objects.filter(username="traveller").exists()


def test_log_in_page_logs_in(client, customer):
    response = client.post(
        reverse("login"),
        {"username": customer.username, "password": "correct-horse-battery"},
        follow=True,
    )
    assert response.context["user"] == customer
    response = client.post(reverse("login"), {"username": customer.username, "password": "nope"})
    assert "Please enter a correct username and password" in response.content.decode()


def test_server_error_page_renders_without_a_request_context(rf):
    from django.views.defaults import server_error

    response = server_error(rf.get("/"))
    assert response.status_code == 500
    assert "Something went wrong on our side" in response.content.decode()
