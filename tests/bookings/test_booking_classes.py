"""Booking classes nested in a fare class (docs/fare-classes.md): prices, nested limits, the
counters every path moves, the audit, and the staff rules on classes and limits."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from bookings.audit import check_inventory
from bookings.booking_classes import cheapest_open, fare_choices
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import BookingClassNotFound, BookingClassSoldOut, SoldOut
from bookings.inventory import remove_booking_class, set_booking_class, set_fare_limits
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, BookingClass, Inventory
from kernel.errors import InvalidRequest
from tests.bookings.confirming import confirm
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def nested_flight(*, rows=2, overbook=1, launch=3, saver=6):
    """12 seats + 1 overbooked; LAUNCH <= `launch`, SAVER + LAUNCH <= `saver`."""
    flight = FlightFactory(layout=economy_only_layout(rows=rows, overbook_limit=overbook))
    for code, rank, limit, price in (("LAUNCH", 1, launch, "29.00"), ("SAVER", 2, saver, "59.00")):
        set_booking_class(
            sale_id=flight.sale_id, fare_class="ECONOMY", code=code, name=code.title(),
            rank=rank, auth_limit=limit, price=Decimal(price),
        )  # fmt: skip
    return flight


def counters(flight):
    rows = BookingClass.objects.filter(sale_id=flight.sale_id).order_by("rank")
    cabin = Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY")
    return {**{c.code: (c.held, c.sold) for c in rows}, "ECONOMY": (cabin.held, cabin.sold)}


def test_a_hold_pays_its_class_price_and_counts_in_every_dearer_class():
    flight = nested_flight()
    booking = hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY",
        seat_numbers=["1A", "1B"], booking_class="launch",
    )  # fmt: skip
    assert (booking.booking_class, booking.amount) == ("LAUNCH", Decimal("58.00"))
    saver = hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="SAVER",
    )  # fmt: skip
    assert saver.amount == Decimal("59.00")
    plain = hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
    )
    assert (plain.booking_class, plain.amount) == ("", Decimal("100.00"))
    assert counters(flight) == {"LAUNCH": (2, 0), "SAVER": (3, 0), "ECONOMY": (4, 0)}
    assert check_inventory(sale_id=flight.sale_id) == []


def test_each_nested_limit_refuses_and_the_cabin_still_sells_dearer_classes():
    flight = nested_flight(launch=2, saver=3)
    people = [UserFactory() for _ in range(6)]

    def hold(customer, code):
        return hold_seatless(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
            booking_class=code,
        )  # fmt: skip

    hold(people[0], "LAUNCH")
    hold(people[1], "LAUNCH")
    with pytest.raises(BookingClassSoldOut) as refused:
        hold(people[2], "LAUNCH")
    assert refused.value.extra == {"fareClass": "ECONOMY", "bookingClass": "LAUNCH"}
    assert isinstance(refused.value, SoldOut) and refused.value.code == "sold-out"
    hold(people[2], "SAVER")
    with pytest.raises(BookingClassSoldOut):
        hold(people[3], "SAVER")
    hold(people[3], "")  # the cabin's own class still sells
    assert counters(flight) == {"LAUNCH": (2, 0), "SAVER": (3, 0), "ECONOMY": (4, 0)}
    assert check_inventory(sale_id=flight.sale_id) == []


def test_the_cabin_limit_binds_every_class():
    flight = nested_flight(rows=1, overbook=0, launch=3, saver=6)  # 6 seats
    for _ in range(5):
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
        )
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="LAUNCH",
    )  # fmt: skip
    with pytest.raises(SoldOut) as refused:
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
            booking_class="LAUNCH",
        )  # fmt: skip
    assert not isinstance(refused.value, BookingClassSoldOut)
    assert counters(flight) == {"LAUNCH": (1, 0), "SAVER": (1, 0), "ECONOMY": (6, 0)}


def test_an_unknown_booking_class_is_refused_and_changes_nothing():
    flight = nested_flight()
    with pytest.raises(BookingClassNotFound):
        hold_seats(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY",
            seat_numbers=["1A"], booking_class="NOPE",
        )  # fmt: skip
    assert not Booking.objects.exists()
    assert counters(flight)["ECONOMY"] == (0, 0)


def test_sale_expiry_and_cancel_move_the_nested_counters():
    flight = nested_flight()
    sold = hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY",
        seat_numbers=["1A"], booking_class="LAUNCH",
    )  # fmt: skip
    confirm(sold)
    lapsed_customer, cancelling = UserFactory(), UserFactory()
    lapsed = hold_seatless(
        customer=lapsed_customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2,
        booking_class="SAVER",
    )  # fmt: skip
    given_up = hold_seatless(
        customer=cancelling, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="LAUNCH",
    )  # fmt: skip
    assert counters(flight) == {"LAUNCH": (1, 1), "SAVER": (3, 1), "ECONOMY": (3, 1)}
    Booking.objects.filter(pk=lapsed.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expire_holds()
    cancel_hold(customer=cancelling, booking_id=given_up.pk)
    assert counters(flight) == {"LAUNCH": (0, 1), "SAVER": (0, 1), "ECONOMY": (0, 1)}
    assert check_inventory(sale_id=flight.sale_id) == []


def test_the_database_refuses_a_class_counter_past_its_limit():
    flight = nested_flight(launch=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        BookingClass.objects.filter(sale_id=flight.sale_id, code="LAUNCH").update(held=3)


def test_the_audit_reports_nested_drift():
    flight = nested_flight()
    BookingClass.objects.filter(sale_id=flight.sale_id, code="SAVER").update(held=1)
    assert check_inventory(sale_id=flight.sale_id) == [
        f"sale {flight.sale_id} ECONOMY/SAVER: held/sold=1/0 but its and lower classes' "
        "bookings cover 0/0"
    ]


def test_the_cheapest_open_class_follows_the_limits():
    flight = nested_flight(launch=1, saver=2)
    choices = fare_choices(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert [(c.code, c.left) for c in choices] == [("LAUNCH", 1), ("SAVER", 2), ("", 13)]
    assert cheapest_open(choices).code == "LAUNCH"
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1,
        booking_class="LAUNCH",
    )  # fmt: skip
    choices = fare_choices(sale_id=flight.sale_id, fare_class="ECONOMY")
    assert cheapest_open(choices).code == "SAVER"
    assert [(c.code, c.left) for c in choices] == [("LAUNCH", 0), ("SAVER", 1), ("", 12)]


def test_staff_rules_on_classes_and_limits():
    flight = nested_flight(launch=3, saver=6)

    def change(code, rank, limit):
        return set_booking_class(
            sale_id=flight.sale_id, fare_class="ECONOMY", code=code, name=code.title(),
            rank=rank, auth_limit=limit, price=Decimal("10.00"),
        )  # fmt: skip

    with pytest.raises(InvalidRequest):  # above the dearer class's limit
        change("LAUNCH", 1, 7)
    with pytest.raises(InvalidRequest):  # above the cabin's capacity + overbook
        change("SAVER", 2, 14)
    with pytest.raises(InvalidRequest):  # a rank is fixed
        change("SAVER", 3, 6)
    with pytest.raises(InvalidRequest):  # below a lower class's limit
        change("SAVER", 2, 2)
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2,
        booking_class="LAUNCH",
    )  # fmt: skip
    with pytest.raises(InvalidRequest):  # below what is held
        change("LAUNCH", 1, 1)
    assert change("LAUNCH", 1, 2).auth_limit == 2  # closes the launch fare
    # A class added above counts what the lower ones already took.
    flex = change("FLEX", 3, 10)
    assert (flex.held, flex.sold) == (2, 0)
    launch = BookingClass.objects.get(sale_id=flight.sale_id, code="LAUNCH")
    with pytest.raises(InvalidRequest):
        remove_booking_class(booking_class_id=launch.pk)
    inventory = Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY")
    set_fare_limits(inventory_id=inventory.pk, capacity=12, overbook_limit=0, price=inventory.price)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_the_embedded_modes_statement_is_all_or_none_on_sqlite():
    """The SQLite form of the nested reserve (the embedded mode) on a real SQLite table: it
    fills the chain to its tightest limit and then takes nothing, not a row of it."""
    import sqlite3

    from bookings.booking_classes import _RESERVE_SQL_SQLITE, _TABLE

    db = sqlite3.connect(":memory:")
    db.execute(
        f'CREATE TABLE "{_TABLE}" (id INTEGER PRIMARY KEY, sale_id INT, fare_class TEXT, '
        "code TEXT, rank INT, auth_limit INT, sold INT, held INT)"
    )
    db.execute(
        f'INSERT INTO "{_TABLE}" VALUES (1, 7, "ECONOMY", "LAUNCH", 1, 3, 0, 0), '
        '(2, 7, "ECONOMY", "SAVER", 2, 4, 0, 2), (3, 7, "ECONOMY", "FLEX", 3, 9, 0, 2)'
    )
    chain = [7, "ECONOMY", "LAUNCH"]
    sql = _RESERVE_SQL_SQLITE.replace("%s", "?")

    def reserve(units):
        return db.execute(sql, [units, 7, "ECONOMY", *chain, 7, "ECONOMY", *chain, units]).rowcount

    assert reserve(2) == 3  # SAVER's room (2) binds
    assert reserve(1) == 0
    assert [r[0] for r in db.execute(f'SELECT held FROM "{_TABLE}" ORDER BY rank')] == [2, 4, 4]
