"""Standby priority at gate close (docs/departure.md, "Standby priority"): the fare class
first (the cabin's own full fare before a nested booking class), then the earliest online
check-in, then the gate scan; with a control that orders by the scan alone, as before, and
seats other passengers."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import F
from django.utils import timezone

from bookings import seating
from bookings.customer_holds import hold_seatless
from bookings.inventory import set_booking_class
from bookings.models import Booking, Passenger
from bookings.tickets import issue_tickets
from flights.departure import close_gate
from flights.models import FareClass, OnlineCheckIn
from flights.online_checkin import check_in_online
from flights.services import CabinLayout, CabinSection, check_inventory
from tests.bookings.confirming import confirm
from tests.factories import FlightFactory, UserFactory
from tests.flights.departing import board, seated, seatless, small_flight

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"sb-{id(settings)}"},
    }


def departure(staff):
    """A full 6-seat cabin whose 1E and 1F never board, and three standby passengers:
    `full` (the cabin's own fare) checked in online last and scanned last, `launch_early` and
    `launch_late` (the LAUNCH booking class) checked in 60 and 30 min before, scanned in the
    opposite order.  Returns the standby tickets by name."""
    now = timezone.now()
    flight = small_flight(departure_at=now + timedelta(hours=3))
    set_booking_class(
        sale_id=flight.sale_id, fare_class="ECONOMY", code="LAUNCH", name="Launch fare",
        rank=1, auth_limit=3, price=Decimal("29.00"),
    )  # fmt: skip
    passengers = seated(flight, "1A", "1B", "1C", "1D", "1E", "1F")
    for ticket in passengers[:4]:
        board(ticket, staff=staff, flight=flight, now=now - timedelta(minutes=25))
    standby = {
        "full": seatless(flight)[0],
        "launch_early": seatless(flight, booking_class="LAUNCH")[0],
        "launch_late": seatless(flight, booking_class="LAUNCH")[0],
    }
    for name, minutes in (("launch_early", 60), ("launch_late", 30), ("full", 10)):
        booking = Booking.objects.get(pk=standby[name].booking_id)
        check_in_online(
            customer=booking.customer, booking_id=booking.pk, now=now - timedelta(minutes=minutes)
        )  # the cabin is full: they stay seatless, to be seated at the gate
    for name, minutes in (("launch_late", 9), ("launch_early", 8), ("full", 7)):
        board(standby[name], staff=staff, flight=flight, now=now - timedelta(minutes=minutes))
    return flight, standby


def seats_of(standby):
    return {
        name: Passenger.objects.filter(pk=t.passenger_id).values_list("seat__seat_no", flat=True)[0]
        for name, t in standby.items()
    }


def test_freed_seats_go_by_fare_class_then_online_check_in_time(staff_user):
    flight, standby = departure(staff_user)
    assert all(
        OnlineCheckIn.objects.filter(passenger_id=t.passenger_id).exists() for t in standby.values()
    )
    queue = seating.standby_queue(sale_id=flight.sale_id, fare_classes=["BUSINESS", "ECONOMY"])
    assert [p.pk for p in queue] == [
        standby[name].passenger_id for name in ("full", "launch_early", "launch_late")
    ]

    result = close_gate(flight_id=flight.pk)

    assert (result.no_shows, result.standby_seated) == (2, 2)
    # 1E is settled first (ticket order): to the full fare, checked in last; 1F to the
    # earlier LAUNCH check-in, though the later one reported at the gate first.
    assert seats_of(standby) == {"full": "1E", "launch_early": "1F", "launch_late": None}
    assert check_inventory(sale_id=flight.sale_id) == []


def test_control_ordering_by_the_gate_scan_alone_seats_other_passengers(staff_user, monkeypatch):
    def scan_time_only(*, sale, fare_classes):  # the order before issue 28 item 2
        return {}, [F("ticket__used_at").asc(), F("ticket__id").asc()]

    monkeypatch.setattr(seating, "standby_order", scan_time_only)
    flight, standby = departure(staff_user)

    close_gate(flight_id=flight.pk)

    assert seats_of(standby) == {"launch_late": "1E", "launch_early": "1F", "full": None}


def test_a_higher_cabin_comes_first_in_the_catalogues_order_whatever_the_callers(staff_user):
    sections = (
        CabinSection(FareClass.BUSINESS, rows=1, letters="AC", price=Decimal("900.00"),
                     overbook_limit=1),
        CabinSection(FareClass.ECONOMY, rows=1, letters="ABCDEF", price=Decimal("100.00"),
                     overbook_limit=1),
    )  # fmt: skip
    flight = FlightFactory(layout=CabinLayout(sections=sections))
    now = timezone.now()
    waiting = {}
    for code, minutes in (("ECONOMY", 9), ("BUSINESS", 2)):  # economy reported first
        booking = hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class=code, passengers=1,
            passenger_names=[f"{code.title()} Standby"],
        )  # fmt: skip
        confirm(booking)
        issue_tickets(booking_id=booking.pk)
        ticket = booking.tickets.get()
        board(ticket, staff=staff_user, flight=flight, now=now - timedelta(minutes=minutes))
        waiting[code] = ticket.passenger_id

    queue = seating.standby_queue(sale_id=flight.sale_id, fare_classes=["ECONOMY", "BUSINESS"])

    assert [p.pk for p in queue] == [waiting["BUSINESS"], waiting["ECONOMY"]]
