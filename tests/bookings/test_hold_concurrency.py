"""Holds under real contention: threads with their own PostgreSQL connections.

Each scenario ends with `check_inventory`; the control test shows that the same load really
double-sells a seat when the guard is removed, so these tests are able to fail.
"""

import threading
import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SeatUnavailable, SoldOut
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import check_inventory
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def customers(n):
    return [UserFactory() for _ in range(n)]


def test_200_threads_one_seat_exactly_one_wins(flight):
    people = customers(200)
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
            )
            for c in people
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 199}, outcomes.errors[:3]
    seat = Seat.objects.get(sale=flight.sale, seat_no="12A")
    assert seat.status == SeatStatus.HELD and seat.booking_id == outcomes.results[0].pk
    assert check_inventory(sale_id=flight.sale_id) == []


def test_500_seatless_holds_sell_exactly_capacity_plus_overbook():
    flight = FlightFactory(layout=economy_only_layout(rows=30, overbook_limit=3))  # 180 + 3
    people = customers(50)
    outcomes = run_concurrently(
        [
            lambda c=people[i % 50]: hold_seatless(
                customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
            )
            for i in range(500)
        ],
        threads=150,
    )
    assert len(outcomes.results) == 183
    # Every other attempt is refused: sold out, or, when 150 threads starve two busy cores
    # past the lock timeout, the polite 503 "too busy" (never a sale, never another error).
    assert set(outcomes.error_kinds) <= {"SoldOut", "TooBusy"}
    assert sum(outcomes.error_kinds.values()) == 317
    inventory = FareInventory.objects.get(sale=flight.sale)
    assert (inventory.held, inventory.capacity + inventory.overbook_limit) == (183, 183)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_crossed_seat_pairs_never_deadlock(flight):
    alice, bob = customers(2)
    for round_no in range(100):
        row = 4 + round_no % 28
        pair = [f"{row}A", f"{row}B"]
        outcomes = run_concurrently(
            [
                lambda pair=pair: hold_seats(
                    customer=alice, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=pair
                ),
                lambda pair=pair: hold_seats(
                    customer=bob,
                    sale_id=flight.sale_id,
                    fare_class="ECONOMY",
                    seat_numbers=pair[::-1],
                ),
            ]
        )
        assert len(outcomes.results) == 1, (round_no, outcomes.errors)
        assert outcomes.error_kinds == {"SeatUnavailable": 1}, (round_no, outcomes.errors)
        Booking.objects.filter(pk=outcomes.results[0].pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
        expire_holds()
    assert check_inventory(sale_id=flight.sale_id) == []


def test_many_threads_take_over_one_expired_hold_exactly_once(flight):
    stale = hold_seats(
        customer=UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["12A", "12B"],
    )
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=stale.pk).update(expires_at=past)
    Seat.objects.filter(booking=stale).update(held_until=past)

    people = customers(50)
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
            )
            for c in people
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 49}
    assert Booking.objects.get(pk=stale.pk).status == BookingStatus.EXPIRED
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").held == 1
    assert check_inventory(sale_id=flight.sale_id) == []


def test_sweep_racing_itself_and_live_holds(flight):
    people = customers(40)
    expired = [
        hold_seats(
            customer=people[i],
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=[f"{10 + i // 6}{'ABCDEF'[i % 6]}"],
        )
        for i in range(24)
    ]
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk__in=[b.pk for b in expired]).update(expires_at=past)
    Seat.objects.filter(booking__in=expired).update(held_until=past)

    sweeps = [lambda: expire_holds(batch_size=5) for _ in range(4)]
    # New customers grab the very seats being swept (takeover) and fresh ones.
    grabs = [
        lambda c=people[24 + i], s=f"{10 + i // 6}{'ABCDEF'[i % 6]}": hold_seats(
            customer=c, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[s]
        )
        for i in range(16)
    ]
    outcomes = run_concurrently(sweeps + grabs)
    unexpected = [e for e in outcomes.errors if not isinstance(e, (SeatUnavailable, SoldOut))]
    assert not unexpected, unexpected
    swept = sum(r for r in outcomes.results if isinstance(r, int))
    taken_over = Booking.objects.filter(
        pk__in=[b.pk for b in expired], status=BookingStatus.EXPIRED
    ).count()
    assert taken_over == 24  # every stale hold expired exactly once, by a sweep or a takeover
    assert swept <= 24
    expire_holds()
    assert check_inventory(sale_id=flight.sale_id) == []


def naive_hold(customer, sale_id, seat_no):
    """The article's "common mistake": read the status, then write.  No lock, no condition."""
    with transaction.atomic():
        seat = Seat.objects.get(sale_id=sale_id, seat_no=seat_no)
        if seat.status != SeatStatus.AVAILABLE:
            raise SeatUnavailable([seat_no])
        time.sleep(0.005)  # the gap every real request has between its read and its write
        booking = Booking.objects.create(
            customer=customer,
            sale_id=sale_id,
            fare_class="ECONOMY",
            seat_count=1,
            amount=100,
            currency="EUR",
            expires_at=timezone.now() + timedelta(minutes=10),
            created_at=timezone.now(),
            updated_at=timezone.now(),
        )
        seat.status, seat.booking, seat.held_until = SeatStatus.HELD, booking, booking.expires_at
        seat.save()
        return booking


def test_control_naive_read_then_write_double_sells(flight):
    people = customers(200)
    outcomes = run_concurrently([lambda c=c: naive_hold(c, flight.sale_id, "12A") for c in people])
    # Without the guard, several customers "win" the same seat: the real tests can fail.
    assert len(outcomes.results) > 1


@pytest.mark.parametrize("kind", ["seats", "seatless"])
def test_a_hold_queues_for_the_fare_row_only_after_its_other_writes(flight, kind):
    """The hot fare-inventory row lock is the hold's last step: while another transaction
    keeps that row locked, a hold waits with its booking and passengers already written (so
    once it gets the lock, only the UPDATE and COMMIT remain), and then completes."""
    from django.db import connection, connections

    customer = UserFactory()
    locked, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def blocker():
        try:
            with transaction.atomic():
                FareInventory.objects.select_for_update().get(
                    sale=flight.sale, fare_class="ECONOMY"
                )
                locked.set()
                release.wait(30)
        finally:
            connections.close_all()

    def holder():
        try:
            if kind == "seats":
                outcome["booking"] = hold_seats(
                    customer=customer,
                    sale_id=flight.sale_id,
                    fare_class="ECONOMY",
                    seat_numbers=["12A", "12B"],
                )
            else:
                outcome["booking"] = hold_seatless(
                    customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
                )
        except Exception as exc:  # reported below
            outcome["error"] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=blocker, daemon=True)]
    threads[0].start()
    assert locked.wait(10)
    threads.append(threading.Thread(target=holder, daemon=True))
    threads[1].start()
    waiting = []
    try:
        deadline = time.monotonic() + 15
        while not waiting and time.monotonic() < deadline:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT a.query, array_agg(c.relname::text ORDER BY c.relname)"
                    "  FROM pg_stat_activity a"
                    "  JOIN pg_locks l ON l.pid = a.pid AND l.granted"
                    "   AND l.mode = 'RowExclusiveLock'"
                    "  JOIN pg_class c ON c.oid = l.relation AND c.relkind = 'r'"
                    " WHERE a.datname = current_database() AND a.wait_event_type = 'Lock'"
                    " GROUP BY a.pid, a.query"
                )
                waiting = cursor.fetchall()
            time.sleep(0.05)
    finally:
        release.set()
        for t in threads:
            t.join(30)
    assert len(waiting) == 1, waiting
    query, written = waiting[0]
    assert query.startswith('UPDATE "bookings_inventory"'), query
    # Booking and passengers were inserted before the hold queued for the hot row.
    assert {"bookings_booking", "bookings_passenger"} <= set(written), written
    assert "error" not in outcome, outcome
    assert outcome["booking"].status == BookingStatus.HELD
    assert check_inventory(sale_id=flight.sale_id) == []
