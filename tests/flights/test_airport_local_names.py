"""Issue 31 (polish): city and airport names in the customer's language on search, the seat
picker, the booking page with its tickets and the boarding pass; English where no local name
is filled in (the control)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from bookings.models import Ticket
from flights import tickets
from kernel.outbox import relay_outbox
from languages.services import set_preferred_language
from tests.bookings.confirming import hold_and_confirm
from tests.factories import AirportFactory, FlightFactory, moscow_to_petersburg_flight

pytestmark = pytest.mark.django_db

CITIES = {"en": ("Moscow", "Saint Petersburg"), "de": ("Moskau", "Sankt Petersburg")}
PICK = "?fare=ECONOMY&passengers=1"
CITIES["ru"] = ("Москва", "Санкт-Петербург")


@pytest.fixture
def flight():
    return moscow_to_petersburg_flight()


@pytest.mark.parametrize("language", ["en", "de", "ru"])
def test_search_picker_booking_page_and_boarding_pass_name_cities_in_the_language(
    client, customer, flight, language
):
    origin, destination = CITIES[language]
    set_preferred_language(user_id=customer.pk, language=language)
    client.force_login(customer)
    day = timezone.localtime(flight.departure_at).date()
    booking = hold_and_confirm(customer, flight, seats=["12A"], names=["Ana Lima"])

    search = client.get(
        reverse("flights:search"),
        {"origin": "SVO", "destination": "LED", "date": f"{day:%Y-%m-%d}", "passengers": 1},
    ).text
    picker = client.get(reverse("flights:seat_picker", args=[flight.pk]) + PICK).text
    page = client.get(f"/bookings/{booking.pk}/").text

    for html in (search, picker, page):
        assert origin in html and destination in html, html[:3000]
    if language != "en":
        assert "Moscow" not in picker and "Saint Petersburg" not in page
        assert {"de": "Flughafen Pulkowo", "ru": "Аэропорт Пулково"}[language] in search
    relay_outbox(now=timezone.now() + timedelta(hours=1))  # the tickets are issued
    ticket = Ticket.objects.get(booking=booking)
    with translation.override(language):
        rows = [value for _label, value in tickets.boarding_pass(ticket).rows]
    assert f"SVO {origin}" in rows and f"LED {destination}" in rows


def test_control_without_local_names_the_english_name_is_shown(client, customer):
    flight = FlightFactory(
        origin=AirportFactory(code="MUC", city="Munich"),
        destination=AirportFactory(code="FRA", city="Frankfurt"),
        departure_at=timezone.now() + timedelta(days=3),
    )
    set_preferred_language(user_id=customer.pk, language="de")
    client.force_login(customer)
    assert "Munich" in client.get(reverse("flights:seat_picker", args=[flight.pk]) + PICK).text
