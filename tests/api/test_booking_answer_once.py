"""A booking's answer works out who still needs the exit-row confirmation once, and who still
needs a name once, though three fields read the first and two the second
(storefront/booking_serializers.py, `once_per_answer`).  A list answers each booking with its
own lists.  The control takes the memo away: three and two again.  (A fresh hold's 201 is
built without the serializer, storefront.hold_answer: the booking is read back to count.)"""

from __future__ import annotations

import pytest

from bookings.customer_holds import hold_seats
from storefront.booking_serializers import BookingSerializer
from tests.api.conftest import client_for
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def calls(monkeypatch) -> dict[str, int]:
    counted = {"exit_rows": 0, "unnamed": 0}
    for name, method in (("exit_rows", "find_unconfirmed_exit_rows"), ("unnamed", "find_unnamed")):
        real = getattr(BookingSerializer, method)

        def counting(self, booking, _real=real, _name=name):
            counted[_name] += 1
            return _real(self, booking)

        monkeypatch.setattr(BookingSerializer, method, counting)
    return counted


def exit_row_hold(client, flight):
    """12A/12B: the A320's exit row, held unconfirmed and unnamed."""
    response = client.post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12A", "12B"]},
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()


def read_back(client, hold: dict, calls: dict[str, int]) -> dict:
    calls.update(exit_rows=0, unnamed=0)
    return client.get(f"/api/bookings/{hold['bookingId']}").json()


def test_one_answer_works_each_list_out_once(calls):
    client = client_for(UserFactory())
    hold = exit_row_hold(client, FlightFactory())
    assert calls == {"exit_rows": 0, "unnamed": 0}  # the 201 is built directly
    data = read_back(client, hold, calls)
    assert calls == {"exit_rows": 1, "unnamed": 1}
    assert data == hold  # the body read back is the body the hold answered
    assert data["exitRowConfirmationNeeded"] is True
    assert [p["seat"] for p in data["unconfirmedExitRowPassengers"]] == ["12A", "12B"]
    assert data["exitRowConfirmationUrl"] == f"/api/bookings/{data['bookingId']}/passengers"
    assert data["namesNeeded"] is True and len(data["unnamedPassengers"]) == 2


def test_a_list_answers_each_booking_with_its_own_lists(calls):
    customer, flight = UserFactory(), FlightFactory()
    client = client_for(customer)
    exit_row_hold(client, flight)
    hold_seats(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["7C"])
    calls.update(exit_rows=0, unnamed=0)
    newest, oldest = client.get("/api/bookings").json()["results"]
    assert calls == {"exit_rows": 2, "unnamed": 2}  # once per booking, not once per list
    assert newest["seats"] == ["7C"] and newest["exitRowConfirmationNeeded"] is False
    assert newest["unconfirmedExitRowPassengers"] == [] and newest["exitRowConfirmationUrl"] is None
    assert oldest["exitRowConfirmationNeeded"] is True
    assert [p["seat"] for p in oldest["unconfirmedExitRowPassengers"]] == ["12A", "12B"]


def test_control_without_the_memo_three_and_two_again(calls, monkeypatch):
    monkeypatch.setattr(
        BookingSerializer, "once_per_answer", lambda self, booking, name, compute: compute(booking)
    )
    client = client_for(UserFactory())
    read_back(client, exit_row_hold(client, FlightFactory()), calls)
    assert calls == {"exit_rows": 3, "unnamed": 2}
