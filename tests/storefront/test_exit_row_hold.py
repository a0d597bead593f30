"""Issue 31, item 11: an exit-row seat is held from the seat picker only with the exit-row
conditions confirmed (the rule online check-in uses); without it the page says why, keeps the
typed names and holds nothing."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from bookings.models import Booking
from flights.models import Seat, SeatStatus
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db

CONDITIONS = "I confirm the exit-row conditions for every passenger seated in an exit row"


def post_hold(client, flight, seats, **extra):
    return client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {
            "fare_class": "ECONOMY",
            "passengers": len(seats),
            "seats": seats,
            "names": ["Ana Lima", "Bo Chen"][: len(seats)],
            **extra,
        },
    )


def test_picker_shows_the_exit_row_conditions_to_confirm(client):
    flight = FlightFactory()  # the A320 layout: rows 12 and 13 are exit rows
    client.force_login(UserFactory())
    page = client.get(
        reverse("flights:seat_picker", args=[flight.pk]) + "?fare=ECONOMY&passengers=2"
    ).content.decode()
    assert 'id="exit-row-confirmed"' in page and CONDITIONS in page
    assert 'id="seat-12A"' in page and 'data-exit="1"' in page and 'data-exit="0"' in page


def test_exit_seat_without_confirmation_is_refused_and_names_are_kept(client):
    flight = FlightFactory()
    client.force_login(UserFactory())
    response = post_hold(client, flight, ["12A", "12B"])
    picker = reverse("flights:seat_picker", args=[flight.pk])
    assert response.status_code == 302 and response.url.startswith(picker)
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "Exit-row conditions not confirmed. Seat 12A is in an exit row: confirm the exit-row "
        "conditions to take it."
    ]
    assert Booking.objects.count() == 0
    assert not Seat.objects.filter(sale=flight.sale).exclude(status=SeatStatus.AVAILABLE).exists()
    again = client.get(response.url).content.decode()
    assert 'value="Ana Lima"' in again and 'value="Bo Chen"' in again


def test_exit_seat_with_confirmation_is_held(client):
    flight = FlightFactory()
    client.force_login(UserFactory())
    response = post_hold(client, flight, ["12A", "12B"], exit_row_confirmed="on")
    booking = Booking.objects.get()
    assert response.url == reverse("bookings:detail", args=[booking.pk])
    assert set(
        Seat.objects.filter(sale=flight.sale, status=SeatStatus.HELD).values_list(
            "seat_no", flat=True
        )
    ) == {"12A", "12B"}


def test_seats_outside_exit_rows_need_no_confirmation(client):
    flight = FlightFactory()
    client.force_login(UserFactory())
    response = post_hold(client, flight, ["14A", "14B"])
    assert response.url == reverse("bookings:detail", args=[Booking.objects.get().pk])
