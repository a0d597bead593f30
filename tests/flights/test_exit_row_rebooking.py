"""Issue 31: a confirmation of the exit-row conditions is for the seat it was given for.  A
rebooking (`flights.rebooking`, denied boarding's rerouting) may seat the passenger in an exit
row of the later flight: the new booking's passenger starts unconfirmed, so online check-in
asks for the confirmation (with a control: a rebooking that carried the old confirmation
over would be caught)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.errors import ExitRowNotConfirmed
from bookings.models import Passenger
from bookings.seat_changes import move_passenger
from flights import rebooking
from flights.models import Flight, OnlineCheckIn
from flights.online_checkin import check_in_online
from flights.rebooking import book_onto
from tests.bookings.confirming import confirm
from tests.factories import UserFactory
from tests.flights.departing import small_flight


def flight_leaving_in(hours: int) -> Flight:
    """Two economy rows (1A-2F), row 1 the exit row, online check-in open."""
    flight = small_flight(rows=2, departure_at=timezone.now() + timedelta(hours=hours))
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[1])
    flight.refresh_from_db()
    return flight


def confirmed_in_exit_row(flight, customer) -> Passenger:
    booking = hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["1A"],
        passenger_names=["Ana Lima"],
        conditions_confirmed=True,  # the exit row's conditions, confirmed with the hold
    )
    confirm(booking)
    passenger = Passenger.objects.select_related("booking").get(booking=booking)
    assert passenger.seat_conditions_confirmed_at is not None
    return passenger


def rebooked(flight, passenger, customer) -> Passenger:
    """The rerouting's booking on the route's next flight (flights.rerouting's step 2)."""
    later = rebooking.later_flights(
        flight=flight, fare_class=passenger.booking.fare_class, now=timezone.now()
    ).first()
    booking = book_onto(candidate=later, passenger=passenger, customer=customer, now=timezone.now())
    new = Passenger.objects.select_related("seat").get(booking=booking)
    assert new.seat.seat_no == "1A"  # the later flight's first free seat: its exit row
    return new


@pytest.mark.django_db
def test_a_rebooking_into_an_exit_row_leaves_the_confirmation_behind_and_check_in_asks():
    customer = UserFactory()
    flight, later = flight_leaving_in(3), flight_leaving_in(6)
    new = rebooked(flight, confirmed_in_exit_row(flight, customer), customer)

    assert new.seat_conditions_confirmed_at is None
    with pytest.raises(ExitRowNotConfirmed) as refused:
        check_in_online(customer=customer, booking_id=new.booking_id)
    assert refused.value.extra["seats"] == ["1A"]
    assert not OnlineCheckIn.objects.filter(passenger=new).exists()

    check_in_online(customer=customer, booking_id=new.booking_id, exit_row_confirmed=True)
    assert OnlineCheckIn.objects.filter(passenger=new, flight=later).exists()
    assert Passenger.objects.get(pk=new.pk).seat_conditions_confirmed_at is not None


@pytest.mark.django_db
def test_control_a_rebooking_that_kept_the_old_confirmation_would_be_caught(monkeypatch):
    """The rebooking passes the old confirmation on (what the test above guards against):
    check-in then asks nothing, so the test above, which expects the 422, would fail."""
    real_hold = rebooking.hold_seats
    monkeypatch.setattr(
        rebooking, "hold_seats", lambda **kw: real_hold(**kw, conditions_confirmed=True)
    )
    customer = UserFactory()
    flight, _later = flight_leaving_in(3), flight_leaving_in(6)
    new = rebooked(flight, confirmed_in_exit_row(flight, customer), customer)

    assert new.seat_conditions_confirmed_at is not None
    check_in_online(customer=customer, booking_id=new.booking_id)  # no 422: it slipped through
    assert OnlineCheckIn.objects.filter(passenger=new).exists()


@pytest.mark.django_db
def test_a_seat_change_clears_the_confirmation_and_keeping_the_seat_keeps_it():
    customer = UserFactory()
    flight = flight_leaving_in(3)
    passenger = confirmed_in_exit_row(flight, customer)

    move_passenger(booking_id=passenger.booking_id, passenger_id=passenger.pk, seat_no="1A")
    assert Passenger.objects.get(pk=passenger.pk).seat_conditions_confirmed_at is not None

    move_passenger(booking_id=passenger.booking_id, passenger_id=passenger.pk, seat_no="1B")
    assert Passenger.objects.get(pk=passenger.pk).seat_conditions_confirmed_at is None
    with pytest.raises(ExitRowNotConfirmed):
        check_in_online(customer=customer, booking_id=passenger.booking_id)
