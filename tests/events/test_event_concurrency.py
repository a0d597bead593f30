"""An event's sale under real contention: threads with their own PostgreSQL connections, through
the engine's one hold path.  Each scenario ends with `check_inventory`; the control test shows
the same load double-selling a venue seat when the guard is removed, so these can fail."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import SeatUnavailable
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus, Inventory, Seat, SeatStatus
from tests.concurrency import run_concurrently
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def customers(n):
    return [UserFactory() for _ in range(n)]


@pytest.fixture
def event():
    return EventFactory()


def test_200_customers_on_one_venue_seat_exactly_one_wins(event):
    people = customers(200)
    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"]
            )
            for c in people
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 199}, outcomes.errors[:3]
    seat = Seat.objects.get(sale=event.sale, seat_no="1-1-1")
    assert seat.status == SeatStatus.HELD and seat.booking_id == outcomes.results[0].pk
    assert Inventory.objects.get(sale=event.sale, fare_class="A").held == 1
    assert check_inventory(sale_id=event.sale_id) == []


def test_a_standing_area_of_50_is_oversold_by_nobody(event):
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


def test_crossed_seat_pairs_never_deadlock_and_never_sell_twice(event):
    alice, bob = customers(2)
    pairs = [[f"1-{row}-{n}", f"1-{row}-{n + 1}"] for row in (1, 2) for n in (1, 3, 5)]
    for round_no in range(30):
        pair = pairs[round_no % len(pairs)]
        outcomes = run_concurrently(
            [
                lambda pair=pair: hold_seats(
                    customer=alice, sale_id=event.sale_id, fare_class="A", seat_numbers=pair
                ),
                lambda pair=pair: hold_seats(
                    customer=bob, sale_id=event.sale_id, fare_class="A", seat_numbers=pair[::-1]
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
    assert check_inventory(sale_id=event.sale_id) == []


def test_many_customers_take_over_one_expired_hold_exactly_once(event):
    stale = hold_seats(
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="B",
        seat_numbers=["2-A-1", "2-A-2"],
    )
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=stale.pk).update(expires_at=past)
    Seat.objects.filter(booking=stale).update(held_until=past)

    outcomes = run_concurrently(
        [
            lambda c=c: hold_seats(
                customer=c, sale_id=event.sale_id, fare_class="B", seat_numbers=["2-A-1"]
            )
            for c in customers(50)
        ]
    )
    assert len(outcomes.results) == 1
    assert outcomes.error_kinds == {"SeatUnavailable": 49}
    assert Booking.objects.get(pk=stale.pk).status == BookingStatus.EXPIRED
    assert Seat.objects.get(sale=event.sale, seat_no="2-A-2").status == SeatStatus.AVAILABLE
    assert Inventory.objects.get(sale=event.sale, fare_class="B").held == 1
    assert check_inventory(sale_id=event.sale_id) == []


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
            amount=80,
            currency="EUR",
            expires_at=now + timedelta(minutes=10),
            created_at=now,
            updated_at=now,
        )
        seat.status, seat.booking, seat.held_until = SeatStatus.HELD, booking, booking.expires_at
        seat.save()
        return booking


def test_control_naive_read_then_write_double_sells_a_venue_seat(event):
    outcomes = run_concurrently(
        [lambda c=c: naive_hold(c, event.sale_id, "1-1-1") for c in customers(200)]
    )
    # Without the guard, several customers "win" the same seat: the real test can fail.
    assert len(outcomes.results) > 1
