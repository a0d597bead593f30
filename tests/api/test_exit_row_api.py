"""Issue 31 (items 11, 15): exit-row conditions are confirmed per passenger before check-in,
not necessarily at the hold.  `POST /api/bookings` holds exit-row seats without the
confirmation (the article's own body, 12A/12B, works) and says who still needs it and where
to give it; `exitRowConfirmed: true` with the hold, `PUT .../passengers` or online check-in
records it on the passengers (`Passenger.seat_conditions_confirmed_at`).  Online check-in
refuses an exit-row passenger without it: 422 `exit-row-not-confirmed` with the seats, and
nothing changes (`flights.rules.require_exit_row_confirmation`, the one rule)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.models import Passenger
from flights.models import Flight, OnlineCheckIn, Seat, SeatStatus
from tests.api.conftest import GOOD_CARD, client_for, pay, problem

pytestmark = pytest.mark.django_db

PROBLEMS = "https://seatkeeper.dev/problems/"
NAMES = ["Ana Lima", "Bo Chen"]


def hold(api, flight, seats, **extra):
    body = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": seats,
            "passengerNames": NAMES[: len(seats)], **extra}  # fmt: skip
    return api.post("/api/bookings", body, format="json", HTTP_ACCEPT_LANGUAGE="en")


def check_in(api, booking_id, **body):
    return api.post(
        f"/api/bookings/{booking_id}/online-check-in",
        body,
        format="json",
        HTTP_ACCEPT_LANGUAGE="en",
    )


def open_check_in(flight):
    Flight.objects.filter(pk=flight.pk).update(
        online_checkin_opens_at=timezone.now() - timedelta(hours=1)
    )


def confirmed(booking_id) -> dict[str, bool]:
    """Seat -> whether its passenger's exit-row confirmation is recorded."""
    return {
        p.seat.seat_no: p.seat_conditions_confirmed_at is not None
        for p in Passenger.objects.filter(booking_id=booking_id).select_related("seat")
    }


def paid_booking(api, flight, seats, **extra) -> int:
    held = hold(api, flight, seats, **extra)
    assert held.status_code == 201, held.content
    booking_id = held.json()["bookingId"]
    assert pay(api, booking_id, paymentMethod=GOOD_CARD).status_code == 201
    return booking_id


def test_the_seat_map_marks_the_exit_rows(customer, flight):
    seats = client_for(customer).get(f"/api/flights/{flight.pk}/seats").json()["seats"]
    exits = {s["seatNo"] for s in seats if s["exitRow"]}
    assert {"12A", "13F"} <= exits and "14A" not in exits and "11A" not in exits
    assert {s["row"] for s in seats if s["exitRow"]} == {12, 13}  # the A320's exit rows


@pytest.mark.parametrize("given", [None, False])
def test_exit_row_seats_are_held_without_the_confirmation_and_the_201_says_it_is_needed(
    customer, flight, given
):
    api = client_for(customer)
    extra = {} if given is None else {"exitRowConfirmed": given}
    held = hold(api, flight, ["14A", "12B"], **extra)
    assert held.status_code == 201, held.content
    data = held.json()
    assert data["exitRowConfirmationNeeded"] is True
    assert data["unconfirmedExitRowPassengers"] == [
        {"passengerId": Passenger.objects.get(seat__seat_no="12B").pk, "seat": "12B"}
    ]  # 14A is no exit row
    assert data["exitRowConfirmationUrl"] == f"/api/bookings/{data['bookingId']}/passengers"
    assert api.get(f"/api/bookings/{data['bookingId']}").json() == data
    assert confirmed(data["bookingId"]) == {"12B": False, "14A": False}


def test_with_the_confirmation_the_hold_records_it_and_nothing_is_needed(customer, flight):
    held = hold(client_for(customer), flight, ["12A", "12B"], exitRowConfirmed=True)
    assert held.status_code == 201, held.content
    data = held.json()
    assert data["exitRowConfirmationNeeded"] is False
    assert data["unconfirmedExitRowPassengers"] == [] and data["exitRowConfirmationUrl"] is None
    assert confirmed(data["bookingId"]) == {"12A": True, "12B": True}


def test_control_seats_outside_exit_rows_need_no_confirmation(customer, flight):
    held = hold(client_for(customer), flight, ["14A", "14B"])
    assert held.status_code == 201, held.content
    assert held.json()["exitRowConfirmationNeeded"] is False


def test_the_passengers_update_records_the_confirmation_with_or_without_names(customer, flight):
    api = client_for(customer)
    booking_id = hold(api, flight, ["12A", "12B"]).json()["bookingId"]

    refused = api.put(f"/api/bookings/{booking_id}/passengers", {}, format="json")
    assert problem(refused, 400)["type"] == f"{PROBLEMS}invalid-request"
    not_confirming = {"exitRowConfirmed": False}
    refused = api.put(f"/api/bookings/{booking_id}/passengers", not_confirming, format="json")
    assert refused.status_code == 400
    assert confirmed(booking_id) == {"12A": False, "12B": False}  # a refusal changes nothing

    answer = api.put(
        f"/api/bookings/{booking_id}/passengers", {"exitRowConfirmed": True}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["exitRowConfirmationNeeded"] is False
    assert [p["name"] for p in answer.json()["passengers"]] == NAMES  # names kept
    assert confirmed(booking_id) == {"12A": True, "12B": True}


@pytest.mark.django_db(transaction=True)
def test_the_articles_journey_holds_pays_and_is_asked_at_check_in(
    sandbox_payments, customer, flight
):
    api = client_for(customer)
    # The article's body (its flight and customer are this test's): no names, no confirmation.
    article = {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12A", "12B"]}
    held = api.post("/api/bookings", article, format="json")
    assert held.status_code == 201, held.content
    data = held.json()
    assert data["exitRowConfirmationNeeded"] is True and data["namesNeeded"] is True
    booking_id = data["bookingId"]
    named = api.put(data["namePassengersUrl"], {"passengerNames": NAMES}, format="json")
    assert named.status_code == 200 and named.json()["exitRowConfirmationNeeded"] is True
    assert pay(api, booking_id, paymentMethod=GOOD_CARD).status_code == 201
    open_check_in(flight)

    url = api.get(f"/api/bookings/{booking_id}").json()["exitRowConfirmationUrl"]
    assert problem(api.post(url, {}, format="json"), 422)["seats"] == ["12A", "12B"]
    assert api.post(url, {"exitRowConfirmed": True}, format="json").status_code == 200
    assert OnlineCheckIn.objects.filter(passenger__booking_id=booking_id).count() == 2


@pytest.mark.django_db(transaction=True)
def test_check_in_refuses_an_unconfirmed_exit_row_passenger_and_changes_nothing(
    sandbox_payments, customer, flight
):
    api = client_for(customer)
    booking_id = paid_booking(api, flight, ["12A", "14A"])
    open_check_in(flight)
    booking = api.get(f"/api/bookings/{booking_id}").json()
    assert booking["status"] == "CONFIRMED" and booking["exitRowConfirmationNeeded"] is True
    assert booking["exitRowConfirmationUrl"] == f"/api/bookings/{booking_id}/online-check-in"

    refused = check_in(api, booking_id)
    data = problem(refused, 422)
    assert data["type"] == f"{PROBLEMS}exit-row-not-confirmed" and data["seats"] == ["12A"]
    assert "12A" in data["detail"] and "check in" in data["detail"]
    assert data["field"] == "exitRowConfirmed"
    assert not OnlineCheckIn.objects.exists()
    assert confirmed(booking_id) == {"12A": False, "14A": False}

    # Choosing another seat out of the exit row needs nothing: moving out makes it moot.
    p12a = Passenger.objects.get(booking_id=booking_id, seat__seat_no="12A")
    moved = check_in(api, booking_id, seats=[{"passengerId": p12a.pk, "seatNo": "20C"}])
    assert moved.status_code == 200, moved.content
    assert OnlineCheckIn.objects.filter(passenger__booking_id=booking_id).count() == 2


@pytest.mark.django_db(transaction=True)
def test_check_in_that_confirms_checks_the_exit_row_passenger_in(
    sandbox_payments, customer, flight
):
    api = client_for(customer)
    booking_id = paid_booking(api, flight, ["12A", "12B"])
    open_check_in(flight)

    answer = check_in(api, booking_id, exitRowConfirmed=True)
    assert answer.status_code == 200, answer.content
    assert sorted(p["seatNo"] for p in answer.json()["passengers"]) == ["12A", "12B"]
    assert OnlineCheckIn.objects.filter(passenger__booking_id=booking_id).count() == 2
    assert confirmed(booking_id) == {"12A": True, "12B": True}
    assert api.get(f"/api/bookings/{booking_id}").json()["exitRowConfirmationNeeded"] is False


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["hold", "passengers"])
def test_a_confirmation_given_before_lets_check_in_ask_nothing(
    sandbox_payments, customer, flight, where
):
    api = client_for(customer)
    extra = {"exitRowConfirmed": True} if where == "hold" else {}
    held = hold(api, flight, ["12A", "12B"], **extra)
    booking_id = held.json()["bookingId"]
    if where == "passengers":
        put = {"passengerNames": NAMES, "exitRowConfirmed": True}
        assert api.put(held.json()["exitRowConfirmationUrl"], put, format="json").status_code == 200
    assert pay(api, booking_id, paymentMethod=GOOD_CARD).status_code == 201
    open_check_in(flight)

    answer = check_in(api, booking_id)  # no exitRowConfirmed: given before
    assert answer.status_code == 200, answer.content
    assert OnlineCheckIn.objects.filter(passenger__booking_id=booking_id).count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_seat_change_into_another_exit_row_seat_needs_the_confirmation_again(
    sandbox_payments, customer, flight
):
    api = client_for(customer)
    booking_id = paid_booking(api, flight, ["12A"], exitRowConfirmed=True)
    open_check_in(flight)
    (passenger,) = Passenger.objects.filter(booking_id=booking_id)
    to_13c = [{"passengerId": passenger.pk, "seatNo": "13C"}]

    data = problem(check_in(api, booking_id, seats=to_13c), 422)
    assert data["seats"] == ["13C"]
    assert Passenger.objects.get(pk=passenger.pk).seat.seat_no == "12A"  # nothing moved
    assert Seat.objects.get(sale=flight.sale, seat_no="13C").status == SeatStatus.AVAILABLE
    assert confirmed(booking_id) == {"12A": True}

    # Control: the same seat again is no change, and its confirmation stands.
    same = check_in(api, booking_id, seats=[{"passengerId": passenger.pk, "seatNo": "12A"}])
    assert same.status_code == 200, same.content
    assert confirmed(booking_id) == {"12A": True}


@pytest.mark.django_db(transaction=True)
def test_control_check_in_without_the_rule_would_let_an_unconfirmed_passenger_in(
    sandbox_payments, customer, flight, monkeypatch
):
    """Shows the 422 above is the rule's doing: without it the same request checks in."""
    from flights import online_checkin

    monkeypatch.setattr(online_checkin, "require_exit_row_confirmation", lambda *a, **k: None)
    api = client_for(customer)
    booking_id = paid_booking(api, flight, ["12A"])
    open_check_in(flight)
    assert check_in(api, booking_id).status_code == 200
    assert OnlineCheckIn.objects.filter(passenger__booking_id=booking_id).exists()
    assert confirmed(booking_id) == {"12A": False}  # in an exit row, never confirmed


def test_the_check_in_refusal_speaks_the_clients_language(customer, flight):
    from tests.bookings.confirming import hold_and_confirm

    booking = hold_and_confirm(customer, flight, seats=["12A"], names=["Ana Lima"])
    open_check_in(flight)
    german = client_for(customer).post(
        f"/api/bookings/{booking.pk}/online-check-in", {}, format="json", HTTP_ACCEPT_LANGUAGE="de"
    )
    data = problem(german, 422)
    assert data["title"] == "Bedingungen für die Notausgangsreihe nicht bestätigt"
    assert "einzuchecken" in data["detail"]


def test_the_schema_documents_the_fields_and_where_the_422_comes_from(anon):
    schema = anon.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]
    request = components["BookingCreateRequest"]["properties"]
    assert "before check-in" in request["exitRowConfirmed"]["description"]
    booking = components["Booking"]["properties"]
    assert {
        "exitRowConfirmationNeeded",
        "unconfirmedExitRowPassengers",
        "exitRowConfirmationUrl",
    } <= set(booking)
    create = schema["paths"]["/api/bookings"]["post"]
    assert "exit-row-not-confirmed" not in create["responses"]["422"]["description"]
    check = schema["paths"]["/api/bookings/{bookingId}/online-check-in"]["post"]
    assert "exit-row-not-confirmed" in check["responses"]["422"]["description"]
    names = components["PassengerNamesInputRequest"]["properties"]
    assert "exitRowConfirmed" in names
    assert "exitRow" in components["Seat"]["properties"]
