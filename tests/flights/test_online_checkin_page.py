"""The online check-in page (from the booking page), seat swaps within a party as one atomic
rearrangement, and two passengers of different bookings racing for one seat at check-in (with
a control)."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.errors import SeatUnavailable
from bookings.models import Passenger, Seat, SeatStatus, Ticket
from bookings.seat_changes import rearrange_seats
from flights.models import Flight, OnlineCheckIn
from flights.online_checkin import check_in_online
from flights.services import check_inventory
from tests.concurrency import run_concurrently
from tests.flights.departing import booking_of, seated, small_flight


def soon(**kwargs):
    flight = small_flight(rows=3, departure_at=timezone.now() + timedelta(hours=2), **kwargs)
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[2])
    flight.refresh_from_db()
    return flight


def seat_of(passenger_id):
    return Passenger.objects.get(pk=passenger_id).seat.seat_no


def page(booking):
    return f"/bookings/{booking.pk}/online-check-in/"


@pytest.mark.django_db
def test_the_booking_page_links_to_online_check_in_and_the_page_checks_in(client):
    flight = soon()
    a, b = seated(flight, "1A", "1B")
    booking = booking_of(a)
    client.force_login(booking.customer)

    detail = client.get(f"/bookings/{booking.pk}/")
    shown = client.get(page(booking))
    done = client.post(page(booking), {f"seat_{a.passenger_id}": "3C"}, follow=True)

    assert page(booking) in detail.content.decode()
    assert shown.status_code == 200 and b'id="checkin-form"' in shown.content
    assert b'data-seat="3C"' in shown.content  # the cabin map, live (its snapshot URL)
    assert f"/flights/{flight.pk}/seatmap.json".encode() in shown.content
    assert done.status_code == 200 and b'id="checked-in"' in done.content
    assert seat_of(a.passenger_id) == "3C" and seat_of(b.passenger_id) == "1B"
    assert OnlineCheckIn.objects.filter(flight=flight).count() == 2
    assert Seat.objects.get(sale_id=flight.sale_id, seat_no="1A").status == SeatStatus.AVAILABLE


@pytest.mark.django_db
def test_the_page_refuses_an_exit_row_seat_unconfirmed_and_a_taken_one_with_a_message(client):
    flight = soon()
    (a,) = seated(flight, "1A")
    seated(flight, "1B")
    booking = booking_of(a)
    client.force_login(booking.customer)

    exit_row = client.post(page(booking), {f"seat_{a.passenger_id}": "2C"}, follow=True)
    taken = client.post(page(booking), {f"seat_{a.passenger_id}": "1B"}, follow=True)
    confirmed = client.post(
        page(booking), {f"seat_{a.passenger_id}": "2C", "exit_row_confirmed": "on"}, follow=True
    )

    assert "exit row" in exit_row.content.decode()
    assert "just taken" in taken.content.decode()
    assert not OnlineCheckIn.objects.exclude(exit_row_confirmed=True).exists()
    assert confirmed.status_code == 200 and seat_of(a.passenger_id) == "2C"
    assert OnlineCheckIn.objects.get(passenger_id=a.passenger_id).exit_row_confirmed


@pytest.mark.django_db
def test_outside_the_window_the_page_shows_it_closed_and_a_post_changes_nothing(client):
    flight = small_flight(rows=3, departure_at=timezone.now() + timedelta(days=3))
    (a,) = seated(flight, "1A")
    booking = booking_of(a)
    client.force_login(booking.customer)

    shown = client.get(page(booking))
    posted = client.post(page(booking), {f"seat_{a.passenger_id}": "3C"}, follow=True)

    assert b'id="checkin-closed"' in shown.content and b'id="checkin-form"' not in shown.content
    assert "not open" in posted.content.decode()
    assert seat_of(a.passenger_id) == "1A" and not OnlineCheckIn.objects.exists()


@pytest.mark.django_db
def test_another_customers_booking_is_404(client):
    flight = soon()
    (a,) = seated(flight, "1A")
    (other,) = seated(flight, "1B")
    client.force_login(booking_of(other).customer)

    assert client.get(page(booking_of(a))).status_code == 404
    assert client.post(page(booking_of(a)), {f"seat_{a.passenger_id}": "3C"}).status_code == 404


@pytest.mark.django_db
def test_window_set_per_flight_is_the_one_the_page_uses(client):
    flight = soon()
    now = timezone.now()
    Flight.objects.filter(pk=flight.pk).update(online_checkin_closes_at=now - timedelta(minutes=1))
    (a,) = seated(flight, "1A")
    client.force_login(booking_of(a).customer)

    assert b'id="checkin-closed"' in client.get(page(booking_of(a))).content


# --- seat changes after check-in: atomic swaps ----------------------------------------------


@pytest.mark.django_db
def test_two_passengers_of_a_party_swap_seats_in_one_step(client):
    flight = soon()
    a, b = seated(flight, "1A", "1B")
    booking = booking_of(a)
    check_in_online(customer=booking.customer, booking_id=booking.pk)

    result = rearrange_seats(
        booking_id=booking.pk, choices={a.passenger_id: "1B", b.passenger_id: "1A"}
    )

    assert result == {a.passenger_id: "1B", b.passenger_id: "1A"}
    assert seat_of(a.passenger_id) == "1B" and seat_of(b.passenger_id) == "1A"
    assert Ticket.objects.get(pk=a.pk).seat_no == "1B"
    assert set(
        Seat.objects.filter(sale_id=flight.sale_id, booking=booking).values_list(
            "seat_no", flat=True
        )
    ) == {"1A", "1B"}
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_a_swap_with_one_seat_lost_undoes_the_whole_rearrangement():
    flight = soon()
    a, b = seated(flight, "1A", "1B")
    seated(flight, "3C")
    booking = booking_of(a)

    with pytest.raises(SeatUnavailable):
        rearrange_seats(booking_id=booking.pk, choices={a.passenger_id: "1B", b.passenger_id: "3C"})

    assert seat_of(a.passenger_id) == "1A" and seat_of(b.passenger_id) == "1B"
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db
def test_a_seat_change_is_pushed_to_the_live_seat_map_after_commit(
    django_capture_on_commit_callbacks, monkeypatch
):
    from bookings import live

    pushed = {}
    monkeypatch.setattr(
        live, "publish_seat_changes", lambda *, sale_id, changes: pushed.update(changes)
    )
    flight = soon()
    (a,) = seated(flight, "1A")
    booking = booking_of(a)

    with django_capture_on_commit_callbacks(execute=True):
        check_in_online(
            customer=booking.customer, booking_id=booking.pk, seat_choices={a.passenger_id: "3F"}
        )
        assert pushed == {}, "nothing is announced before commit"

    assert pushed == {"3F": SeatStatus.SOLD, "1A": SeatStatus.AVAILABLE}


# --- two passengers, one seat, at check-in --------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_two_customers_checking_in_to_the_same_seat_at_once_one_gets_it():
    flight = soon()
    tickets = [seated(flight, f"1{letter}")[0] for letter in "AB"]

    def check_in(ticket):
        booking = booking_of(ticket)
        return lambda: check_in_online(
            customer=booking.customer,
            booking_id=booking.pk,
            seat_choices={ticket.passenger_id: "3C"},
        ).seats[ticket.passenger_id]

    outcomes = run_concurrently([check_in(t) for t in tickets])

    assert outcomes.results == ["3C"]
    assert outcomes.error_kinds == {"SeatUnavailable": 1}
    assert Passenger.objects.filter(seat__seat_no="3C", seat__sale_id=flight.sale_id).count() == 1
    # The loser's check-in was undone with it: not recorded, still in the old seat.
    assert OnlineCheckIn.objects.count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.concurrency
def test_control_checking_in_without_the_seat_lock_and_condition_seats_both_in_it():
    import time

    flight = soon()
    tickets = [seated(flight, f"1{letter}")[0] for letter in "AB"]
    target = Seat.objects.get(sale_id=flight.sale_id, seat_no="3C")

    def naive(ticket):
        def check_in():
            # What rearrange_seats does without lock_seats and the AVAILABLE condition.
            free = Seat.objects.get(pk=target.pk).status == SeatStatus.AVAILABLE
            time.sleep(0.2)
            if not free:
                raise SeatUnavailable(["3C"])
            with transaction.atomic():
                Seat.objects.filter(pk=target.pk).update(
                    status=SeatStatus.SOLD, booking_id=ticket.booking_id
                )
                OnlineCheckIn.objects.create(
                    flight=flight, passenger_id=ticket.passenger_id, checked_in_at=timezone.now()
                )
            return "3C"

        return check_in

    outcomes = run_concurrently([naive(t) for t in tickets])

    assert outcomes.results == ["3C", "3C"], "both were checked in to seat 3C"
