"""Holds under real contention, for every catalogue's sale (a flight's and an event's): threads
with their own PostgreSQL connections, through the engine's one hold path.

Each scenario ends with `check_inventory`; the control test shows that the same load really
double-sells a seat when the guard is removed, so these tests are able to fail.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SeatUnavailable, SoldOut
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Inventory, Seat, SeatStatus
from tests.concurrency import run_concurrently
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def customers(n):
    return [UserFactory() for _ in range(n)]


@dataclass(frozen=True)
class SaleCase:
    """A sale of one catalogue, and where on it the scenarios below contend."""

    sale_id: int
    seat_class: str  # a class sold by seat
    seat: str  # one seat of it
    crossed_pairs: list[list[str]]  # adjacent seat pairs of it, taken in turn
    rounds: int  # of the crossed-pairs scenario
    stale_class: str  # a class whose expired hold of `stale_seats` is taken over
    stale_seats: list[str]
    seatless_class: str  # a class sold by count (flights: any cabin; events: standing)


@pytest.fixture(params=["flight", "event"])
def sale(request) -> SaleCase:
    if request.param == "flight":
        flight = request.getfixturevalue("flight")
        return SaleCase(
            sale_id=flight.sale_id,
            seat_class="ECONOMY",
            seat="12A",
            crossed_pairs=[[f"{row}A", f"{row}B"] for row in range(4, 32)],
            rounds=100,
            stale_class="ECONOMY",
            stale_seats=["12A", "12B"],
            seatless_class="ECONOMY",
        )
    event = EventFactory()
    return SaleCase(
        sale_id=event.sale_id,
        seat_class="A",
        seat="1-1-1",
        crossed_pairs=[[f"1-{row}-{n}", f"1-{row}-{n + 1}"] for row in (1, 2) for n in (1, 3, 5)],
        rounds=30,
        stale_class="B",
        stale_seats=["2-A-1", "2-A-2"],
        seatless_class="GA-3",
    )


def test_200_customers_on_one_seat_exactly_one_wins(sale):
    people = customers(200)
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c,
                sale_id=sale.sale_id,
                fare_class=sale.seat_class,
                seat_numbers=[sale.seat],
            )
            for c in people
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 199}, outcomes.errors[:3]
    seat = Seat.objects.get(sale_id=sale.sale_id, seat_no=sale.seat)
    assert seat.status == SeatStatus.HELD and seat.booking_id == outcomes.results[0].pk
    assert Inventory.objects.get(sale_id=sale.sale_id, fare_class=sale.seat_class).held == 1
    assert check_inventory(sale_id=sale.sale_id) == []


def test_crossed_seat_pairs_never_deadlock_and_never_sell_twice(sale):
    alice, bob = customers(2)
    for round_no in range(sale.rounds):
        pair = sale.crossed_pairs[round_no % len(sale.crossed_pairs)]
        outcomes = run_concurrently(
            [
                lambda pair=pair: hold_seats(
                    customer=alice,
                    sale_id=sale.sale_id,
                    fare_class=sale.seat_class,
                    seat_numbers=pair,
                ),
                lambda pair=pair: hold_seats(
                    customer=bob,
                    sale_id=sale.sale_id,
                    fare_class=sale.seat_class,
                    seat_numbers=pair[::-1],
                ),
            ]
        )
        assert len(outcomes.results) == 1, (round_no, outcomes.errors)
        assert outcomes.error_kinds == {"SeatUnavailable": 1}, (round_no, outcomes.errors)
        winner = outcomes.results[0]
        assert set(Seat.objects.filter(booking=winner).values_list("seat_no", flat=True)) == set(
            pair
        )
        Booking.objects.filter(pk=winner.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
        expire_holds()
    assert check_inventory(sale_id=sale.sale_id) == []


def test_many_customers_take_over_one_expired_hold_exactly_once(sale):
    stale = hold_seats(
        customer=UserFactory(),
        sale_id=sale.sale_id,
        fare_class=sale.stale_class,
        seat_numbers=sale.stale_seats,
    )
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=stale.pk).update(expires_at=past)
    Seat.objects.filter(booking=stale).update(held_until=past)

    taken, left = sale.stale_seats
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c, sale_id=sale.sale_id, fare_class=sale.stale_class, seat_numbers=[taken]
            )
            for c in customers(50)
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 49}
    assert Booking.objects.get(pk=stale.pk).status == BookingStatus.EXPIRED
    assert Seat.objects.get(sale_id=sale.sale_id, seat_no=left).status == SeatStatus.AVAILABLE
    assert Inventory.objects.get(sale_id=sale.sale_id, fare_class=sale.stale_class).held == 1
    assert check_inventory(sale_id=sale.sale_id) == []


# --- seatless holds: a flight's overbooking margin, an event's standing area ------------------


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
    inventory = Inventory.objects.get(sale=flight.sale)
    assert (inventory.held, inventory.capacity + inventory.overbook_limit) == (183, 183)
    assert check_inventory(sale_id=flight.sale_id) == []


def test_a_standing_area_of_50_is_oversold_by_nobody():
    event = EventFactory()
    people = customers(60)  # 60 parties of 2 for 50 places
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seatless(
                customer=c, sale_id=event.sale_id, fare_class="GA-3", passengers=2
            )
            for c in people
        ]
    )
    assert len(outcomes.results) == 25
    assert outcomes.error_kinds == {"SoldOut": 35}, outcomes.errors[:3]
    area = Inventory.objects.get(sale=event.sale, fare_class="GA-3")
    assert (area.held, area.sold, area.capacity, area.overbook_limit) == (50, 0, 50, 0)
    assert check_inventory(sale_id=event.sale_id) == []


# --- the expiry sweep and the hot fare row ------------------------------------------------------


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
        now = timezone.now()
        booking = Booking.objects.create(
            customer=customer,
            sale_id=sale_id,
            fare_class=seat.fare_class,
            seat_count=1,
            amount=100,
            currency="EUR",
            expires_at=now + timedelta(minutes=10),
            created_at=now,
            updated_at=now,
        )
        seat.status, seat.booking, seat.held_until = SeatStatus.HELD, booking, booking.expires_at
        seat.save()
        return booking


def test_control_naive_read_then_write_double_sells(sale):
    outcomes = run_concurrently(
        [lambda c=c: naive_hold(c, sale.sale_id, sale.seat) for c in customers(200)]
    )
    # Without the guard, several customers "win" the same seat: the real tests can fail.
    assert len(outcomes.results) > 1


@pytest.mark.parametrize("kind", ["seats", "seatless"])
def test_a_hold_queues_for_the_fare_row_only_after_its_other_writes(sale, kind):
    """The hot fare-inventory row lock is the hold's last step: while another transaction
    keeps that row locked, a hold waits with its booking and passengers already written (so
    once it gets the lock, only the UPDATE and COMMIT remain), and then completes."""
    from django.db import connection, connections

    customer = UserFactory()
    fare_class = sale.seat_class if kind == "seats" else sale.seatless_class
    locked, release = threading.Event(), threading.Event()
    outcome: dict = {}

    def blocker():
        try:
            with transaction.atomic():
                Inventory.objects.select_for_update().get(
                    sale_id=sale.sale_id, fare_class=fare_class
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
                    sale_id=sale.sale_id,
                    fare_class=fare_class,
                    seat_numbers=sale.crossed_pairs[0],
                )
            else:
                outcome["booking"] = hold_seatless(
                    customer=customer, sale_id=sale.sale_id, fare_class=fare_class, passengers=2
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
    if kind == "seatless":
        # On PostgreSQL the seatless hold is one statement (bookings.one_statement_hold) whose
        # last step is the same UPDATE: it waits there, its INSERTs already made.
        assert "seatkeeper_hold_units(" in query, query
    else:
        assert query.startswith('UPDATE "bookings_inventory"'), query
    # Booking and passengers were inserted before the hold queued for the hot row.
    assert {"bookings_booking", "bookings_passenger"} <= set(written), written
    assert "error" not in outcome, outcome
    assert outcome["booking"].status == BookingStatus.HELD
    assert check_inventory(sale_id=sale.sale_id) == []
