"""Issue 11, low items: bad input that used to be a 500 is a 4xx or a message, and changes
nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bookings.customer_holds import hold_seats
from bookings.models import Booking, Passenger, Ticket, TicketStatus
from bookings.ticket_codes import verify_ticket_code
from flights.models import FareInventory
from kernel.errors import InvalidRequest
from tests.bookings.test_checkin import ticketed

pytestmark = pytest.mark.django_db


def non_ascii_signature(code: str) -> str:
    return code[:-1] + "é"


# --- ticket codes ---------------------------------------------------------------------------


def test_the_verifier_calls_a_non_ascii_signature_forged(customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    from bookings.ticket_codes import BadTicketCode

    with pytest.raises(BadTicketCode):
        verify_ticket_code(non_ascii_signature(ticket.code))


@pytest.mark.parametrize("bad", ["é", "\x00", "SK\u202e1"])
def test_scan_api_refuses_non_ascii_or_control_characters(customer, staff_user, flight, bad):
    _, (ticket, _) = ticketed(customer, flight)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=staff_user).key}")
    for code in (non_ascii_signature(ticket.code), ticket.code + bad):
        response = api.post(
            "/api/checkin/scan", {"code": code, "flightId": flight.pk}, format="json"
        )
        assert response.status_code == 400, response.content
        assert response["Content-Type"] == "application/problem+json"
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID and ticket.used_at is None


def test_scan_page_refuses_a_non_ascii_signature(client, customer, staff_user, flight):
    _, (ticket, _) = ticketed(customer, flight)
    client.force_login(staff_user)
    url = reverse("bookings:checkin")
    for code in (non_ascii_signature(ticket.code), ticket.code + "\x00"):
        response = client.post(url, {"flight": flight.pk, "code": code})
        assert response.status_code == 400
        assert "not a Seatkeeper ticket code" in response.content.decode()
    assert Ticket.objects.get(pk=ticket.pk).status == TicketStatus.VALID


# --- search page ----------------------------------------------------------------------------


@pytest.mark.parametrize("day", ["9999-12-31", "9999-12-30"])
def test_search_page_with_a_date_at_the_end_of_the_calendar(client, flight, day):
    response = client.get(
        reverse("flights:search"),
        {
            "origin": flight.origin_id,
            "destination": flight.destination_id,
            "date": day,
            "passengers": 1,
        },
    )
    assert response.status_code == 200
    if day == "9999-12-31":
        assert "too far in the future" in response.content.decode()


# --- NUL and control characters in passenger names --------------------------------------------


def nothing_held(flight) -> bool:
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    return not Booking.objects.exists() and not Passenger.objects.exists() and inventory.held == 0


def test_hold_page_refuses_a_nul_in_a_passenger_name(client, customer, flight):
    client.force_login(customer)
    response = client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {"fare_class": "ECONOMY", "passengers": 1, "seats": ["12A"], "names": ["Ana\x00Lima"]},
        follow=True,
    )
    assert response.status_code == 200
    assert any("control characters" in str(m) for m in response.context["messages"])
    assert nothing_held(flight)


def test_hold_page_refuses_a_malformed_seat(client, customer, flight):
    client.force_login(customer)
    response = client.post(
        reverse("bookings:hold_create", args=[flight.pk]),
        {"fare_class": "ECONOMY", "passengers": 1, "seats": ["12\x00A"], "names": ["Ana"]},
        follow=True,
    )
    assert any("Not a seat number" in str(m) for m in response.context["messages"])
    assert nothing_held(flight)


def test_api_refuses_a_nul_in_a_passenger_name(customer, flight):
    api = APIClient()
    api.force_authenticate(customer)
    response = api.post(
        "/api/bookings",
        {
            "flightId": flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12A"],
            "passengerNames": ["Ana\x00Lima"],
        },
        format="json",
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert nothing_held(flight)


@pytest.mark.parametrize("name", ["Ana\x00Lima", "Ana\x07", "\ud800"])
def test_the_hold_service_refuses_control_characters_in_names(customer, flight, name):
    with pytest.raises(InvalidRequest):
        hold_seats(
            customer=customer,
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["12A"],
            passenger_names=[name],
        )
    assert nothing_held(flight)


def test_names_from_every_script_are_still_welcome(customer, flight):
    names = ["Zoë Ñúñez", "Nguyễn Văn An", "محمد‌رضا", "李小龍"]  # incl. a ZWNJ in Persian
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12A", "12B", "12C", "12D"],
        passenger_names=names,
    )
    assert sorted(booking.passengers.values_list("full_name", flat=True)) == sorted(names)


# --- found by the page-form fuzz ------------------------------------------------------------


@pytest.mark.parametrize("username", ["x" * 100_000, "ana\x00"])
def test_login_page_with_a_hostile_username_is_a_failed_login(client, username):
    response = client.post("/accounts/login/", {"username": username, "password": "guess"})
    assert response.status_code == 200  # the form again, with its error


@pytest.mark.parametrize("target", ["0", "/\n", "//evil.example/", "https://evil.example/"])
def test_waitlist_next_must_be_a_path_of_ours(client, customer, flight, target):
    client.force_login(customer)
    response = client.post(
        f"/flights/{flight.pk}/waitlist/join/",
        {"fare_class": "ECONOMY", "party_size": 1, "next": target},
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
