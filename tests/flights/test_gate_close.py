"""Gate close: unboarded tickets become no-shows, their seats go to standby in the documented
priority, the departure counts are recorded once, and the beat and staff action reach it."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.errors import SaleClosed
from bookings.models import Passenger, Seat, SeatStatus, TicketStatus
from bookings.tickets import ScanOutcome
from flights.departure import close_due_gates, close_gate
from flights.models import CabinDeparture, Flight, FlightStatus, NoShow
from flights.rules import gate_closes_at
from flights.services import check_inventory
from tests.factories import StaffFactory, UserFactory
from tests.flights.departing import board, seated, seatless, small_flight

pytestmark = pytest.mark.django_db


@pytest.fixture
def flight(db):
    return small_flight()


def reload(ticket):
    ticket.refresh_from_db()
    return ticket


def test_an_unboarded_passengers_seat_goes_to_the_standby_passenger(flight, staff_user):
    boarded, absent = seated(flight, "1A", "1B")
    (standby,) = seatless(flight)
    board(boarded, staff=staff_user, flight=flight)
    board(standby, staff=staff_user, flight=flight)  # reports at the gate without a seat

    result = close_gate(flight_id=flight.pk)

    assert (result.no_shows, result.standby_seated, result.settled) == (1, 1, True)
    assert reload(absent).status == TicketStatus.REVOKED
    no_show = NoShow.objects.get()
    assert (no_show.ticket_id, no_show.seat_no, no_show.seat_given_to_id) == (
        absent.pk,
        "1B",
        standby.pk,
    )
    assert reload(standby).seat_no == "1B"
    seat = Seat.objects.get(sale_id=flight.sale_id, seat_no="1B")
    assert (seat.status, seat.booking_id) == (SeatStatus.SOLD, standby.booking_id)
    assert Passenger.objects.get(pk=standby.passenger_id).seat == seat
    assert Passenger.objects.get(pk=absent.passenger_id).seat is None
    assert reload(boarded).status == TicketStatus.USED and boarded.seat_no == "1A"
    assert check_inventory(sale_id=flight.sale_id) == []  # both units stay sold


def test_standby_goes_by_the_time_passengers_reported_at_the_gate(flight, staff_user):
    seated(flight, "1C")
    late, early = seatless(flight), seatless(flight)
    now = timezone.now()
    board(late[0], staff=staff_user, flight=flight, now=now)
    board(early[0], staff=staff_user, flight=flight, now=now - timedelta(minutes=5))

    close_gate(flight_id=flight.pk)

    assert reload(early[0]).seat_no == "1C"
    assert reload(late[0]).seat_no == ""  # no second seat came free
    record = CabinDeparture.objects.get(flight=flight)
    assert (record.sold, record.boarded, record.no_shows) == (3, 2, 1)
    assert (record.standby_seated, record.unseated) == (1, 1)


def test_a_seatless_passenger_who_never_came_is_a_no_show_without_a_seat(flight):
    (absent,) = seatless(flight)

    close_gate(flight_id=flight.pk)

    no_show = NoShow.objects.get()
    assert (no_show.ticket_id, no_show.seat_no, no_show.seat_given_to) == (absent.pk, "", None)


def test_with_nobody_on_standby_the_seat_stays_sold_to_the_no_show(flight):
    (absent,) = seated(flight, "1D")

    close_gate(flight_id=flight.pk)

    seat = Seat.objects.get(sale_id=flight.sale_id, seat_no="1D")
    assert (seat.status, seat.booking_id) == (SeatStatus.SOLD, absent.booking_id)
    assert NoShow.objects.get().seat_given_to is None
    assert check_inventory(sale_id=flight.sale_id) == []


def test_a_scan_after_gate_close_is_refused_and_the_flight_no_longer_sells(flight, staff_user):
    (absent,) = seated(flight, "1E")
    close_gate(flight_id=flight.pk)

    assert board(absent, staff=staff_user, flight=flight).outcome == ScanOutcome.REVOKED
    with pytest.raises(SaleClosed):
        hold_seats(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["1F"],
            passenger_names=["Late Buyer"],
        )


def test_closing_twice_settles_each_ticket_once_and_records_the_counts_once(flight, staff_user):
    seated(flight, "1A", "1B")

    first = close_gate(flight_id=flight.pk)
    second = close_gate(flight_id=flight.pk)

    assert (first.no_shows, second.no_shows) == (2, 0)
    assert second.settled
    assert NoShow.objects.count() == 2
    assert CabinDeparture.objects.filter(flight=flight).count() == 1


def test_a_cancelled_flight_has_no_gate_to_close(flight):
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.CANCELLED)

    with pytest.raises(Exception, match="cancelled"):
        close_gate(flight_id=flight.pk)
    assert not Flight.objects.filter(pk=flight.pk, gate_closed_at__isnull=False).exists()


# --- the beat ------------------------------------------------------------------------------


def test_the_beat_closes_gates_that_are_due_and_only_those():
    now = timezone.now()
    due = small_flight(departure_at=now + timedelta(minutes=19))
    not_yet = small_flight(departure_at=now + timedelta(minutes=21))
    own_time = small_flight(departure_at=now + timedelta(hours=2))
    Flight.objects.filter(pk=own_time.pk).update(gate_closes_at=now - timedelta(seconds=1))
    cancelled = small_flight(departure_at=now + timedelta(minutes=5))
    for each in (due, not_yet, own_time, cancelled):
        seated(each, "1A")
    Flight.objects.filter(pk=cancelled.pk).update(status=FlightStatus.CANCELLED)

    assert close_due_gates(now=now) == 2

    closed = set(Flight.objects.filter(gate_settled_at__isnull=False).values_list("pk", flat=True))
    assert closed == {due.pk, own_time.pk}
    assert gate_closes_at(not_yet) == not_yet.departure_at - timedelta(minutes=20)
    assert close_due_gates(now=now) == 0  # settled gates are not closed again


def test_the_beat_leaves_flights_that_left_long_ago_to_staff():
    now = timezone.now()
    old = small_flight(departure_at=now + timedelta(minutes=1))
    seated(old, "1A")

    assert close_due_gates(now=now + timedelta(hours=7)) == 0
    assert NoShow.objects.count() == 0


# --- the staff action ----------------------------------------------------------------------


def action(client, flight, **extra):
    return client.post(
        reverse("admin:flights_flight_changelist"),
        {"action": "close_gates", "_selected_action": [flight.pk], **extra},
    )


def test_staff_see_the_counts_first_and_only_confirming_closes_the_gate(client, flight):
    seated(flight, "1A", "1B")
    client.force_login(StaffFactory())

    preview = action(client, flight)

    assert preview.status_code == 200
    html = preview.content.decode()
    assert 'class="unboarded">2<' in html and 'class="boarded">0<' in html
    assert NoShow.objects.count() == 0 and not Flight.objects.get(pk=flight.pk).gate_closed_at

    done = action(client, flight, confirm="yes")

    assert done.status_code == 302
    assert NoShow.objects.count() == 2
    assert Flight.objects.get(pk=flight.pk).gate_settled_at is not None


def test_closing_a_gate_needs_its_permission(client, flight):
    seated(flight, "1A")
    clerk = UserFactory(is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="change_flight"))
    client.force_login(clerk)

    response = action(client, flight, confirm="yes")

    # Not even offered without the permission: the admin answers as for an unknown action.
    assert response.status_code == 302
    assert "No action selected" in client.get(response.url).content.decode()
    assert NoShow.objects.count() == 0

    clerk.user_permissions.add(Permission.objects.get(codename="close_gate"))
    clerk = type(clerk).objects.get(pk=clerk.pk)  # drop the permission cache
    client.force_login(clerk)
    action(client, flight, confirm="yes")
    assert NoShow.objects.count() == 1
