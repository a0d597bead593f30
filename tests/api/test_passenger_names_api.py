"""Issue 15: passengers are named before payment on every path.  A hold without names (a
waitlist offer, a seatless unit) is named through the API or the hold page, with validation;
bad input is a 4xx problem and changes nothing."""

import pytest
from django.urls import reverse

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.models import Booking
from tests.api.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def names_url(booking):
    return f"/api/bookings/{booking.pk}/passengers"


def names_of(booking):
    return [
        p.full_name
        for p in Booking.objects.get(pk=booking.pk).passengers.order_by("seat__seat_no", "id")
    ]


@pytest.fixture
def unnamed(customer, flight):
    return hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["14B", "14A"]
    )


def test_the_api_names_a_held_booking_in_seat_order(api, unnamed):
    response = api.put(
        names_url(unnamed), {"passengerNames": ["Ana Lima", " Bo Chen "]}, format="json"
    )
    assert response.status_code == 200, response.content
    assert names_of(unnamed) == ["Ana Lima", "Bo Chen"]


def test_a_seatless_unit_is_named_too(api, customer, flight):
    booking = hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
    )
    assert names_of(booking) == [""]
    assert (
        api.put(names_url(booking), {"passengerNames": ["Olga Ivanova"]}, format="json").status_code
        == 200
    )
    assert names_of(booking) == ["Olga Ivanova"]


@pytest.mark.parametrize(
    "body",
    [
        {"passengerNames": ["Ana Lima"]},  # one name for two passengers
        {"passengerNames": ["Ana Lima", "  "]},  # a blank one
        {"passengerNames": ["Ana Lima", "Bo\x00Chen"]},  # a control character
        {"passengerNames": ["Ana Lima", "x" * 121]},  # too long
        {"passengerNames": []},
        {},
    ],
)
def test_bad_names_are_a_problem_and_change_nothing(api, unnamed, body):
    response = api.put(names_url(unnamed), body, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert names_of(unnamed) == ["", ""]


def test_someone_elses_booking_is_404(unnamed):
    other = client_for(UserFactory())
    response = other.put(names_url(unnamed), {"passengerNames": ["A", "B"]}, format="json")
    assert response.status_code == 404
    assert names_of(unnamed) == ["", ""]


def test_the_hold_page_asks_for_names_before_pay(client, customer, unnamed):
    client.force_login(customer)
    detail = reverse("bookings:detail", args=[unnamed.pk])
    page = client.get(detail).content.decode()
    assert 'id="names-form"' in page and 'id="pay-form"' not in page
    assert "(seat 14A)" in page and "(seat 14B)" in page

    refused = client.post(reverse("bookings:names", args=[unnamed.pk]), {"names": ["Ana", ""]})
    assert refused.status_code == 302
    assert names_of(unnamed) == ["", ""]
    assert "Enter the full name of every passenger" in client.get(detail).content.decode()

    client.post(reverse("bookings:names", args=[unnamed.pk]), {"names": ["Ana Lima", "Bo Chen"]})
    page = client.get(detail).content.decode()
    assert names_of(unnamed) == ["Ana Lima", "Bo Chen"]
    assert 'id="names-form"' not in page and 'id="pay-form"' in page
