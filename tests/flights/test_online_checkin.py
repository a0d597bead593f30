"""Online check-in: its window, seat choice, automatic seats that keep a party together and
leave exit rows alone, seatless units seated, and two passengers racing for one seat (with a
control)."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.errors import BookingNotFound, ExitRowNotConfirmed, SeatUnavailable
from bookings.models import Passenger, Seat, SeatStatus, Ticket
from bookings.seat_changes import move_passenger, seats_together
from flights.models import Flight, OnlineCheckIn
from flights.online_checkin import OnlineCheckInClosed, check_in_online
from flights.services import check_inventory
from tests.concurrency import run_concurrently
from tests.factories import UserFactory
from tests.flights.departing import booking_of, seated, seatless, small_flight


def soon(**kwargs):
    """A 3-row economy flight leaving in two hours (online check-in open), exit row 2."""
    flight = small_flight(rows=3, departure_at=timezone.now() + timedelta(hours=2), **kwargs)
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[2])
    flight.refresh_from_db()
    return flight


def seat_of(ticket):
    return Passenger.objects.get(pk=ticket.passenger_id).seat.seat_no


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("before_departure", "is_open"),
    [
        (timedelta(hours=24, seconds=1), False),
        (timedelta(hours=24), True),  # opens 24 h before
        (timedelta(minutes=45, seconds=1), True),
        (timedelta(minutes=45), False),  # the cut-off itself is closed
    ],
)
def test_the_window_opens_24_h_before_and_closes_at_the_45_minute_cut_off(
    before_departure, is_open
):
    flight = soon()
    (ticket,) = seated(flight, "1A")
    booking = booking_of(ticket)

    def check_in():
        return check_in_online(
            customer=booking.customer,
            booking_id=booking.pk,
            now=flight.departure_at - before_departure,
        )

    if is_open:
        assert check_in().seats == {ticket.passenger_id: "1A"}
    else:
        with pytest.raises(OnlineCheckInClosed):
            check_in()
        assert not OnlineCheckIn.objects.exists()


@pytest.mark.django_db
def test_choosing_a_free_seat_moves_the_passenger_and_frees_the_old_one():
    flight = soon()
    (ticket,) = seated(flight, "1A")
    booking = booking_of(ticket)

    result = check_in_online(
        customer=booking.customer, booking_id=booking.pk, seat_choices={ticket.passenger_id: "3F"}
    )

    assert result.seats == {ticket.passenger_id: "3F"}
    assert Seat.objects.get(sale_id=flight.sale_id, seat_no="1A").status == SeatStatus.AVAILABLE
    assert Seat.objects.get(sale_id=flight.sale_id, seat_no="3F").booking_id == booking.pk
    assert Ticket.objects.get(pk=ticket.pk).seat_no == "3F"
    assert OnlineCheckIn.objects.filter(passenger_id=ticket.passenger_id).exists()
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_a_seatless_party_gets_seats_side_by_side_outside_the_exit_row():
    flight = soon()
    seated(flight, "1A", "1B", "1C", "1D")  # row 1 has two seats left
    party = seatless(flight, 3)
    booking = booking_of(party[0])

    result = check_in_online(customer=booking.customer, booking_id=booking.pk)

    seats = sorted(result.seats.values())
    assert seats == ["3A", "3B", "3C"]  # row 1 lacks three, row 2 is the exit row
    assert [Ticket.objects.get(pk=t.pk).seat_no for t in party] == [seat_of(t) for t in party]
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_the_exit_row_needs_its_conditions_confirmed():
    flight = soon()
    (ticket,) = seated(flight, "1A")
    booking = booking_of(ticket)
    choice = {ticket.passenger_id: "2C"}

    with pytest.raises(ExitRowNotConfirmed, match="exit row"):
        check_in_online(customer=booking.customer, booking_id=booking.pk, seat_choices=choice)
    assert seat_of(ticket) == "1A"

    check_in_online(
        customer=booking.customer,
        booking_id=booking.pk,
        seat_choices=choice,
        exit_row_confirmed=True,
    )
    assert seat_of(ticket) == "2C"


@pytest.mark.django_db
def test_in_a_full_cabin_a_seatless_passenger_stays_for_the_gate():
    flight = small_flight(rows=1, departure_at=timezone.now() + timedelta(hours=2))
    seated(flight, "1A", "1B", "1C", "1D", "1E", "1F")
    (ticket,) = seatless(flight)
    booking = booking_of(ticket)

    result = check_in_online(customer=booking.customer, booking_id=booking.pk)

    assert result.seats == {ticket.passenger_id: ""}
    assert OnlineCheckIn.objects.filter(passenger_id=ticket.passenger_id).exists()


@pytest.mark.django_db
def test_another_customers_booking_is_not_found_and_a_taken_seat_undoes_everything():
    flight = soon()
    (mine,) = seated(flight, "1A")
    seated(flight, "1B")
    booking = booking_of(mine)

    with pytest.raises(BookingNotFound):
        check_in_online(customer=UserFactory(), booking_id=booking.pk)
    with pytest.raises(SeatUnavailable):
        check_in_online(
            customer=booking.customer, booking_id=booking.pk, seat_choices={mine.passenger_id: "1B"}
        )
    assert seat_of(mine) == "1A" and not OnlineCheckIn.objects.exists()


def test_seats_together_prefers_the_partys_row_and_side_by_side():
    free = [Seat(row=r, letter=letter) for r in (1, 5) for letter in "ABDE"]
    assert [(s.row, s.letter) for s in seats_together(free, 2)] == [(1, "A"), (1, "B")]
    assert [(s.row, s.letter) for s in seats_together(free, 2, near_rows={5})] == [
        (5, "A"),
        (5, "B"),
    ]
    assert [(s.row, s.letter) for s in seats_together(free, 3)] == [(1, "A"), (1, "B"), (1, "D")]
    assert len(seats_together(free, 9)) == 8  # all there is


# --- two passengers, one seat --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_passengers_choosing_the_same_seat_at_once_one_gets_it():
    flight = soon()
    tickets = [seated(flight, f"1{letter}")[0] for letter in "ABCDEF"]

    def choose(ticket):
        return lambda: move_passenger(
            booking_id=ticket.booking_id, passenger_id=ticket.passenger_id, seat_no="3C"
        )

    outcomes = run_concurrently([choose(t) for t in tickets])

    assert outcomes.results == ["3C"]
    assert outcomes.error_kinds == {"SeatUnavailable": 5}
    assert Passenger.objects.filter(seat__seat_no="3C", seat__sale_id=flight.sale_id).count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_claiming_the_seat_without_the_condition_seats_two_in_it():
    import time

    flight = soon()
    tickets = [seated(flight, f"1{letter}")[0] for letter in "AB"]
    target = Seat.objects.get(sale_id=flight.sale_id, seat_no="3C")

    def naive(ticket):
        def claim():
            free = Seat.objects.filter(pk=target.pk, status=SeatStatus.AVAILABLE).exists()
            time.sleep(0.2)
            if not free:
                raise SeatUnavailable(["3C"])
            with transaction.atomic():  # no status condition: the last writer wins
                Seat.objects.filter(pk=target.pk).update(
                    status=SeatStatus.SOLD, booking_id=ticket.booking_id
                )
            return ticket.pk

        return claim

    outcomes = run_concurrently([naive(t) for t in tickets])

    assert len(outcomes.results) == 2, "both were told they have seat 3C"


# --- the API -------------------------------------------------------------------------------


def api_check_in(client, booking, body):
    return client.post(
        f"/api/bookings/{booking.pk}/online-check-in", body, content_type="application/json"
    )


@pytest.mark.django_db
def test_the_api_checks_in_with_a_chosen_seat_and_answers_problems():
    from rest_framework.test import APIClient

    flight = soon()
    (ticket,) = seated(flight, "1A")
    seated(flight, "1B")
    booking = booking_of(ticket)
    client = APIClient()
    client.force_authenticate(booking.customer)
    pid = ticket.passenger_id

    taken = api_check_in(client, booking, {"seats": [{"passengerId": pid, "seatNo": "1B"}]})
    bad = api_check_in(client, booking, {"seats": [{"passengerId": pid, "seatNo": "XYZ"}]})
    done = api_check_in(client, booking, {"seats": [{"passengerId": pid, "seatNo": "3d"}]})

    assert taken.status_code == 409 and taken["Content-Type"] == "application/problem+json"
    assert bad.status_code == 400
    assert done.status_code == 200
    assert done.json() == {
        "bookingId": booking.pk,
        "passengers": [{"passengerId": pid, "seatNo": "3D"}],
    }
    other = APIClient()
    other.force_authenticate(UserFactory())
    assert api_check_in(other, booking, {}).status_code == 404


@pytest.mark.django_db
def test_the_api_says_when_check_in_is_closed():
    from rest_framework.test import APIClient

    flight = small_flight()  # leaves in 20 days
    (ticket,) = seated(flight, "1A")
    booking = booking_of(ticket)
    client = APIClient()
    client.force_authenticate(booking.customer)

    response = api_check_in(client, booking, {})

    assert response.status_code == 409
    assert response.json()["type"].endswith("online-check-in-closed")
