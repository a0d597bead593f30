"""A sale's guarded updates are sent as plain SQL, not compiled by the ORM for every payment
(docs/performance.md, "Issue 26: the pay request", "Next cuts"): each statement is exactly
the one the ORM's queryset sends for the same values, byte for byte as the database gets it.
On PostgreSQL the seats' lock read and their UPDATE go as one statement (bookings.seat_sale):
the ORM's lock read in a CTE, the ORM's UPDATE beside it limited to the rows it locked."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bookings.lifecycle import sell_held_booking
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Passenger,
    Seat,
    SeatStatus,
    WaitlistEntry,
    WaitlistStatus,
)
from kernel.locking import lock_seats
from kernel.models import OutboxEvent
from tests.factories import named_hold

pytestmark = pytest.mark.django_db(transaction=True)


def sent(run) -> list[str]:
    """The statements `run` sends, as the database received them, then rolled back."""
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        run()
        transaction.set_rollback(True)
    return [q["sql"] for q in queries.captured_queries]


def orm_sale(booking: Booking, now) -> list[str]:
    """The ORM's querysets that `sell_held_booking` once ran, for the same values."""
    n = booking.seat_count

    def run():
        Booking.objects.filter(pk=booking.pk, status=BookingStatus.HELD).update(
            status=BookingStatus.CONFIRMED, confirmed_at=now, updated_at=now
        )
        Seat.objects.filter(booking_id=booking.pk, status=SeatStatus.HELD).update(
            status=SeatStatus.SOLD, held_until=None
        )
        Inventory.objects.filter(sale_id=booking.sale_id, fare_class=booking.fare_class).update(
            held=F("held") - n, sold=F("sold") + n
        )
        WaitlistEntry.objects.filter(offer_id=booking.pk, status=WaitlistStatus.OFFERED).update(
            status=WaitlistStatus.BOOKED, closed_at=now
        )

    return sent(run)


def test_a_sale_sends_the_orms_own_updates(customer, flight):
    booking = named_hold(customer=customer, flight=flight, seats=("12A", "12B"))
    before = Inventory.objects.get(sale_id=booking.sale_id, fare_class=booking.fare_class)
    now = timezone.now()
    expected = orm_sale(booking, now)

    def sell():
        locked = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(locked, now=now)

    statements = sent(sell)
    seats_update = expected.pop(1)
    assert [sql for sql in statements if sql.startswith("UPDATE")] == expected
    (seats,) = [sql for sql in statements if sql.startswith("WITH")]
    assert _limited_to_the_locked(seats_update) in seats
    # ...and it still sells: the counters and seats moved, once committed.
    with transaction.atomic():
        sell()
    inventory = Inventory.objects.get(sale_id=booking.sale_id, fare_class=booking.fare_class)
    assert (inventory.held, inventory.sold) == (before.held - 2, before.sold + 2)
    assert set(Seat.objects.filter(booking=booking).values_list("status", flat=True)) == {
        SeatStatus.SOLD
    }
    assert Booking.objects.get(pk=booking.pk).confirmed_at == now


def orm_reads(booking: Booking) -> tuple[list[str], list, list]:
    """The ORM's querysets of the sale's two reads, their statements and their answers."""
    answers: dict[str, list] = {}

    def run():
        answers["seats"] = list(
            lock_seats(Seat.objects.filter(booking_id=booking.pk)).values_list("seat_no", flat=True)
        )
        # The lock read as seat_sale's one statement takes it: with the row's id and sale.
        list(
            lock_seats(Seat.objects.filter(booking_id=booking.pk)).values_list(
                "id", "sale_id", "seat_no"
            )
        )
        answers["passengers"] = list(
            Passenger.objects.filter(booking_id=booking.pk)
            .order_by("id")
            .values_list("pk", "full_name", "seat__seat_no")
        )

    return sent(run), answers["seats"], answers["passengers"]


def test_a_sale_reads_seats_and_passengers_with_the_orms_own_selects(customer, flight):
    booking = named_hold(customer=customer, flight=flight, seats=("12B", "12A"))
    expected, seat_nos, passengers = orm_reads(booking)
    assert "FOR UPDATE" in expected[0]  # the seats' lock read is a lock

    def sell():
        locked = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(locked, now=timezone.now())

    statements = sent(sell)
    _, locked_rows, passengers_read = expected
    assert "FOR UPDATE" in locked_rows
    (seats,) = [sql for sql in statements if sql.startswith("WITH")]
    assert seats.startswith(f'WITH "locked" AS ({locked_rows}), "sold" AS (')
    assert seats.endswith('SELECT "seat_no" FROM "locked" ORDER BY "sale_id", "seat_no"')
    ours = [sql for sql in statements if "bookings_seat" in sql and sql.startswith("SELECT")]
    assert ours == [passengers_read]
    # ...and the event says what the ORM's reads said, in the lock order (12A before 12B).
    with transaction.atomic():
        sell()
    payload = OutboxEvent.objects.get(event_type="booking.confirmed").payload
    assert payload["seats"] == seat_nos == ["12A", "12B"]
    assert [(p["passengerId"], p["fullName"], p["seat"]) for p in payload["passengers"]] == [
        tuple(row) for row in passengers
    ]


def _limited_to_the_locked(orm_update: str) -> str:
    """The ORM's seats UPDATE with the one condition seat_sale adds: only the rows locked."""
    assert orm_update.endswith(")")
    return orm_update[:-1] + ' AND "bookings_seat"."id" IN (SELECT "id" FROM "locked"))'


def test_one_statement_locks_and_sells_the_bookings_seats_only(customer, flight):
    from bookings.seat_sale import sell_seats

    booking = named_hold(customer=customer, flight=flight, seats=("12B", "12A", "11C"))
    other = named_hold(customer=customer, flight=flight, seats=("13A",))
    with transaction.atomic():
        Booking.objects.select_for_update().get(pk=booking.pk)
        assert sell_seats(booking) == ["11C", "12A", "12B"]  # every seat, in the lock order
    seats = Seat.objects.filter(booking__in=[booking, other])
    assert dict(seats.values_list("seat_no", "status")) == {
        "11C": SeatStatus.SOLD,
        "12A": SeatStatus.SOLD,
        "12B": SeatStatus.SOLD,
        "13A": SeatStatus.HELD,  # another booking's: untouched
    }


def test_without_postgresql_the_lock_read_and_the_orms_update_go_as_before(
    customer, flight, settings
):
    """The control of the one statement: the two statements it stands for."""
    settings.USES_POSTGRES = False
    booking = named_hold(customer=customer, flight=flight, seats=("12B", "12A"))
    expected, seat_nos, _ = orm_reads(booking)
    orm_update = orm_sale(booking, timezone.now())[1]

    def sell():
        locked = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(locked, now=timezone.now())

    statements = sent(sell)
    assert not [sql for sql in statements if sql.startswith("WITH")]
    assert expected[0] in statements and orm_update in statements
    assert seat_nos == ["12A", "12B"]
