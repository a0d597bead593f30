"""The hold's two hand-written statements (bookings.holding) mean what the ORM's did: the
live held units of a customer on a sale, and the conditional reserve of fare units."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import F, Sum
from django.utils import timezone

from bookings.holding import _hold_cap_exceeded, reserve_units
from bookings.models import Booking, BookingStatus, Inventory
from tests.factories import FlightFactory, UserFactory


def orm_live_held_units(*, customer_id: int, sale_id: int, now) -> int:
    return (
        Booking.objects.filter(
            customer_id=customer_id, sale_id=sale_id, status=BookingStatus.HELD, expires_at__gt=now
        ).aggregate(units=Sum("seat_count"))["units"]
        or 0
    )


def booking(*, customer, sale_id, status, seat_count, expires_at, now) -> Booking:
    return Booking.objects.create(
        customer=customer,
        sale_id=sale_id,
        fare_class="ECONOMY",
        status=status,
        seat_count=seat_count,
        amount=100 * seat_count,
        currency="EUR",
        expires_at=expires_at,
        created_at=now,
        updated_at=now,
    )


@pytest.mark.django_db
def test_the_cap_counts_exactly_the_live_held_units_the_orm_counts(settings):
    now = timezone.now()
    customer, someone_else = UserFactory(), UserFactory()
    flight, other_flight = FlightFactory(), FlightFactory()
    sale = flight.sale_id
    later, earlier = now + timedelta(minutes=5), now - timedelta(seconds=1)
    booking(customer=customer, sale_id=sale, status="HELD", seat_count=2, expires_at=later, now=now)
    booking(customer=customer, sale_id=sale, status="HELD", seat_count=3, expires_at=now, now=now)
    booking(
        customer=customer, sale_id=sale, status="HELD", seat_count=1, expires_at=earlier, now=now
    )
    booking(
        customer=customer, sale_id=sale, status="CONFIRMED", seat_count=4, expires_at=later, now=now
    )
    booking(
        customer=someone_else, sale_id=sale, status="HELD", seat_count=5, expires_at=later, now=now
    )
    booking(
        customer=customer,
        sale_id=other_flight.sale_id,
        status="HELD",
        seat_count=6,
        expires_at=later,
        now=now,
    )
    live = orm_live_held_units(customer_id=customer.pk, sale_id=sale, now=now)
    assert live == 2  # control: only the first booking is live, held, this customer's, this sale's
    settings.SEATKEEPER = {**settings.SEATKEEPER, "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": 4}
    cap = settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE"]
    assert _hold_cap_exceeded(customer=customer, sale_id=sale, units=cap - live, now=now) is None
    assert _hold_cap_exceeded(customer=customer, sale_id=sale, units=cap - live + 1, now=now) == cap
    # No live holds at all: the SUM of no rows is NULL, which counts as zero.
    assert _hold_cap_exceeded(customer=UserFactory(), sale_id=sale, units=cap, now=now) is None


@pytest.mark.django_db
def test_reserve_takes_units_up_to_capacity_plus_overbooking_minus_sold_and_no_more():
    flight = FlightFactory()
    row = Inventory.objects.get(sale_id=flight.sale_id, fare_class="ECONOMY")
    Inventory.objects.filter(pk=row.pk).update(
        sold=10, held=F("capacity") + F("overbook_limit") - 13
    )
    # Three units are left: 2 fit, then 1, then nothing; a failed reserve changes nothing.
    assert reserve_units(sale_id=flight.sale_id, fare_class="ECONOMY", units=2)
    assert not reserve_units(sale_id=flight.sale_id, fare_class="ECONOMY", units=2)
    assert reserve_units(sale_id=flight.sale_id, fare_class="ECONOMY", units=1)
    assert not reserve_units(sale_id=flight.sale_id, fare_class="ECONOMY", units=1)
    row.refresh_from_db()
    assert row.held + row.sold == row.capacity + row.overbook_limit
    # Only the named fare class's row moves.
    assert not reserve_units(sale_id=flight.sale_id, fare_class="NOPE", units=1)
    business = Inventory.objects.get(sale_id=flight.sale_id, fare_class="BUSINESS")
    assert reserve_units(sale_id=flight.sale_id, fare_class="BUSINESS", units=1)
    business_after = Inventory.objects.get(pk=business.pk)
    assert business_after.held == business.held + 1
