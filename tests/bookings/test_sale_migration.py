"""The move to the generic sale (issue 14) keeps every existing booking intact.

The database is migrated back to the state before the change, filled the way the old code
filled it (flights with live HELD holds, CONFIRMED bookings with tickets, seatless overbooking
units, a waitlist entry), then migrated forward.  Every row must come through with its values,
every flight must own a sale with its own id, the counters must still add up, and a new flight
must still get a fresh sale id.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from bookings.audit import check_inventory
from bookings.models import (
    Booking,
    Inventory,
    Passenger,
    Sale,
    SaleKind,
    Seat,
    Ticket,
    WaitlistEntry,
)
from flights.models import Flight
from tests.factories import FlightFactory, UserFactory, economy_only_layout

BEFORE = [
    ("bookings", "0007_idempotency_records_and_email_receipts"),
    ("flights", "0003_flight_gate_exit_rows"),
    ("waitroom", "0003_waiting_room"),
]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def fill_the_old_schema(apps, customer_id: int) -> dict:
    """Two flights as the pre-sale code left them: seats, fare rows with consistent counters."""
    Airport = apps.get_model("flights", "Airport")
    Flight = apps.get_model("flights", "Flight")
    FareInventory = apps.get_model("flights", "FareInventory")
    Seat = apps.get_model("flights", "Seat")
    Booking = apps.get_model("bookings", "Booking")
    Passenger = apps.get_model("bookings", "Passenger")
    Ticket = apps.get_model("bookings", "Ticket")
    WaitlistEntry = apps.get_model("waitroom", "WaitlistEntry")

    now = timezone.now()
    sgn = Airport.objects.create(
        code="SGN", name="Tan Son Nhat", city="Ho Chi Minh City", country="VN",
        time_zone="Asia/Ho_Chi_Minh",
    )  # fmt: skip
    han = Airport.objects.create(
        code="HAN", name="Noi Bai", city="Hanoi", country="VN", time_zone="Asia/Ho_Chi_Minh"
    )
    flights = []
    for n in range(2):
        departure = now + timedelta(days=10 + n)
        flight = Flight.objects.create(
            code=f"VN{200 + n}", origin=sgn, destination=han, departure_at=departure,
            arrival_at=departure + timedelta(hours=2), exit_rows=[12, 13],
        )  # fmt: skip
        FareInventory.objects.create(
            flight=flight, fare_class="ECONOMY", capacity=6, overbook_limit=2, price="100.00"
        )
        Seat.objects.bulk_create(
            Seat(flight=flight, seat_no=f"1{letter}", row=1, letter=letter, fare_class="ECONOMY")
            for letter in "ABCDEF"
        )
        flights.append(flight)

    def book(flight, status, seat_nos, seatless=0):
        count = len(seat_nos) + seatless
        booking = Booking.objects.create(
            customer_id=customer_id, flight=flight, fare_class="ECONOMY", status=status,
            seat_count=count, amount=Decimal("100.00") * count, currency="EUR",
            expires_at=now + timedelta(minutes=10), created_at=now, updated_at=now,
            confirmed_at=now if status == "CONFIRMED" else None,
        )  # fmt: skip
        seats = list(Seat.objects.filter(flight=flight, seat_no__in=seat_nos))
        Seat.objects.filter(pk__in=[s.pk for s in seats]).update(
            status="HELD" if status == "HELD" else "SOLD",
            booking=booking,
            held_until=booking.expires_at if status == "HELD" else None,
        )
        passengers = [
            Passenger.objects.create(booking=booking, seat=seat, full_name=f"P {seat.seat_no}")
            for seat in seats
        ] + [
            Passenger.objects.create(booking=booking, full_name="Seatless") for _ in range(seatless)
        ]
        counter = "held" if status == "HELD" else "sold"
        inventory = FareInventory.objects.get(flight=flight, fare_class="ECONOMY")
        setattr(inventory, counter, getattr(inventory, counter) + count)
        inventory.save()
        if status == "CONFIRMED":
            for p in passengers:
                Ticket.objects.create(
                    booking=booking, passenger=p, flight=flight, serial=f"T{p.pk:08d}",
                    code=f"SK1.test.{p.pk}", passenger_name=p.full_name,
                    seat_no=p.seat.seat_no if p.seat_id else "", fare_class="ECONOMY",
                    issued_at=now,
                )  # fmt: skip
        return booking

    first, second = flights
    held = book(first, "HELD", ["1A", "1B"])
    confirmed = book(first, "CONFIRMED", ["1C"], seatless=1)
    seatless_hold = book(second, "HELD", [], seatless=2)
    sold = book(second, "CONFIRMED", ["1F", "1E"])
    WaitlistEntry.objects.create(
        flight=second, fare_class="ECONOMY", customer_id=customer_id, party_size=1, joined_at=now
    )
    return {
        "flights": [f.pk for f in flights],
        "bookings": {b.pk: (b.flight_id, b.status, b.seat_count) for b in (
            held, confirmed, seatless_hold, sold)},
        "seats": {
            s["id"]: (s["flight_id"], s["seat_no"], s["status"], s["booking_id"])
            for s in Seat.objects.values("id", "flight_id", "seat_no", "status", "booking_id")
        },
        "inventories": {
            i["id"]: (i["flight_id"], i["capacity"], i["overbook_limit"], i["sold"], i["held"])
            for i in FareInventory.objects.values(
                "id", "flight_id", "capacity", "overbook_limit", "sold", "held"
            )
        },
        "tickets": {
            t["id"]: (t["flight_id"], t["seat_no"], t["booking_id"])
            for t in Ticket.objects.values("id", "flight_id", "seat_no", "booking_id")
        },
        "passengers": {
            p["id"]: (p["booking_id"], p["seat_id"])
            for p in Passenger.objects.values("id", "booking_id", "seat_id")
        },
    }  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_existing_holds_bookings_tickets_and_counters_survive_the_move_to_sales():
    customer = UserFactory()
    try:
        old_apps = migrate(BEFORE)
        before = fill_the_old_schema(old_apps, customer.pk)
        migrate(latest())

        for flight_id in before["flights"]:
            flight = Flight.objects.get(pk=flight_id)
            assert flight.sale_id == flight_id  # Sale.id = Flight.id: no key value changed
            assert flight.sale.kind == SaleKind.FLIGHT
        assert Sale.objects.count() == len(before["flights"])
        assert {b.pk: (b.sale_id, b.status, b.seat_count) for b in Booking.objects.all()} == before[
            "bookings"
        ]
        assert {
            s.pk: (s.sale_id, s.seat_no, s.status, s.booking_id) for s in Seat.objects.all()
        } == before["seats"]
        assert {
            i.pk: (i.sale_id, i.capacity, i.overbook_limit, i.sold, i.held)
            for i in Inventory.objects.all()
        } == before["inventories"]
        assert {t.pk: (t.sale_id, t.seat_no, t.booking_id) for t in Ticket.objects.all()} == (
            before["tickets"]
        )
        assert {p.pk: (p.booking_id, p.seat_id) for p in Passenger.objects.all()} == (
            before["passengers"]
        )
        assert WaitlistEntry.objects.get().sale_id == before["flights"][1]
        assert all(not s.section and not s.accessible for s in Seat.objects.all())
        assert check_inventory() == []

        # The id sequence moved past the migrated sales: a new flight gets a fresh sale.
        fresh = FlightFactory(layout=economy_only_layout(rows=1))
        assert fresh.sale_id > max(before["flights"]) and fresh.pk == fresh.sale_id
        assert check_inventory() == []
    finally:
        migrate(latest())
