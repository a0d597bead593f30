"""Issue 31 (polish, open point (b)): the exit-row conditions on the API.  The seat picker
makes the customer confirm them; `POST /api/bookings` follows the same rule in the same place
(`customer_holds.hold_chosen_seats` → `flights.rules.require_exit_row_confirmation`): a seat
in an exit row (the seat map's `exitRow: true`) needs `exitRowConfirmed: true`, else 422
problem+json `exit-row-not-confirmed` naming the seats, and nothing is held or counted."""

import pytest

from bookings.models import Booking
from flights.models import FareInventory, Seat, SeatStatus
from tests.api.conftest import client_for, problem

pytestmark = pytest.mark.django_db

PROBLEMS = "https://seatkeeper.dev/problems/"


def hold(api, flight, seats, **extra):
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": seats,
            "passengerNames": ["Ana Lima", "Bo Chen"][: len(seats)], **extra}  # fmt: skip
    return api.post("/api/bookings", body, format="json", HTTP_ACCEPT_LANGUAGE="en")


def nothing_held(flight) -> bool:
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    return (
        inventory.held == 0
        and not Booking.objects.exists()
        and not Seat.objects.filter(sale=flight.sale).exclude(status=SeatStatus.AVAILABLE).exists()
    )


def test_the_seat_map_marks_the_exit_rows(customer, flight):
    seats = client_for(customer).get(f"/api/flights/{flight.pk}/seats").json()["seats"]
    exits = {s["seatNo"] for s in seats if s["exitRow"]}
    assert {"12A", "13F"} <= exits and "14A" not in exits and "11A" not in exits
    assert {s["row"] for s in seats if s["exitRow"]} == {12, 13}  # the A320's exit rows


@pytest.mark.parametrize("confirmed", [None, False])
def test_an_exit_row_seat_without_confirmation_is_a_422_and_holds_nothing(
    customer, flight, confirmed
):
    extra = {} if confirmed is None else {"exitRowConfirmed": confirmed}
    data = problem(hold(client_for(customer), flight, ["14A", "12B"], **extra), 422)
    assert data["type"] == f"{PROBLEMS}exit-row-not-confirmed"
    assert data["title"] == "Exit-row conditions not confirmed"
    assert "12B" in data["detail"] and data["seats"] == ["12B"]
    assert data["field"] == "exitRowConfirmed"
    assert nothing_held(flight)


def test_with_the_conditions_confirmed_the_exit_row_seats_are_held(customer, flight):
    held = hold(client_for(customer), flight, ["12A", "12B"], exitRowConfirmed=True)
    assert held.status_code == 201, held.content
    assert held.json()["seats"] == ["12A", "12B"] or sorted(
        p["seat"] for p in held.json()["passengers"]
    ) == ["12A", "12B"]


def test_control_seats_outside_exit_rows_need_no_confirmation(customer, flight):
    held = hold(client_for(customer), flight, ["14A", "14B"])
    assert held.status_code == 201, held.content


def test_the_refusal_speaks_the_clients_language(customer, flight):
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12A"]}
    german = client_for(customer).post(
        "/api/bookings", body, format="json", HTTP_ACCEPT_LANGUAGE="de"
    )
    assert problem(german, 422)["title"] == "Bedingungen für die Notausgangsreihe nicht bestätigt"


def test_the_schema_documents_the_field_the_422_and_the_seat_maps_mark(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    create = schema["paths"]["/api/bookings"]["post"]
    request = schema["components"]["schemas"]["BookingCreateRequest"]["properties"]
    assert "exit-row-not-confirmed" in request["exitRowConfirmed"]["description"]
    responses = create["responses"]
    assert "exit-row-not-confirmed" in responses["422"]["description"]
    assert "exitRow" in schema["components"]["schemas"]["Seat"]["properties"]
