"""bookings 0015 (nested booking classes) forward and back with live rows: holds written
before it keep working as the fare class's own class, and going back keeps every booking."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bookings.audit import check_inventory
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.inventory import set_booking_class
from bookings.models import Booking, BookingClass, BookingStatus
from tests.bookings.confirming import confirm
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory, economy_only_layout

BEFORE = [("bookings", "0014_offline_gates")]
FIELDS = ("id", "sale_id", "fare_class", "status", "seat_count", "amount", "expires_at")


@pytest.mark.django_db(transaction=True)
def test_live_holds_survive_the_nested_classes_forward_and_back():
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=1))
    try:
        old = migrate(BEFORE)
        OldBooking = old.get_model("bookings", "Booking")
        assert "booking_class" not in {f.name for f in OldBooking._meta.get_fields()}
        held = hold_on_the_old_schema(old, flight)
        before = list(OldBooking.objects.order_by("id").values(*FIELDS))

        migrate(latest())
        assert list(Booking.objects.order_by("id").values(*FIELDS)) == before
        assert Booking.objects.get(pk=held).booking_class == ""  # the fare class's own
        confirm(Booking.objects.get(pk=held))  # an old hold is paid as before
        set_booking_class(
            sale_id=flight.sale_id, fare_class="ECONOMY", code="LAUNCH", name="Launch",
            rank=1, auth_limit=2, price=Decimal("29.00"),
        )  # fmt: skip
        launch = hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2,
            booking_class="LAUNCH",
        )  # fmt: skip
        assert check_inventory(sale_id=flight.sale_id) == []
        rows = list(Booking.objects.order_by("id").values(*FIELDS))

        back = migrate(BEFORE)  # the classes go; every booking stays, with its amount
        assert (
            list(back.get_model("bookings", "Booking").objects.order_by("id").values(*FIELDS))
            == rows
        )
        assert launch.pk in {r["id"] for r in rows}
    finally:
        migrate(latest())
    assert not BookingClass.objects.exists()
    assert Booking.objects.get(pk=held).status == BookingStatus.CONFIRMED
    # The schema is whole again: a hold of the fare class's own class works.
    hold_seats(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["2A"]
    )


def hold_on_the_old_schema(apps, flight) -> int:
    """A HELD booking of one seat as the code before 0015 wrote it (counters moved too)."""
    from django.utils import timezone

    Booking = apps.get_model("bookings", "Booking")
    Seat = apps.get_model("bookings", "Seat")
    Passenger = apps.get_model("bookings", "Passenger")
    Inventory = apps.get_model("bookings", "Inventory")
    now = timezone.now()
    booking = Booking.objects.create(
        customer_id=UserFactory().pk, sale_id=flight.sale_id, fare_class="ECONOMY",
        status="HELD", seat_count=1, amount=Decimal("100.00"), currency="EUR",
        expires_at=now + timezone.timedelta(minutes=10), created_at=now, updated_at=now,
    )  # fmt: skip
    seat = Seat.objects.get(sale_id=flight.sale_id, seat_no="1A")
    Seat.objects.filter(pk=seat.pk).update(
        status="HELD", booking=booking, held_until=booking.expires_at
    )
    Passenger.objects.create(booking=booking, seat=seat, full_name="Ana Lima")
    Inventory.objects.filter(sale_id=flight.sale_id, fare_class="ECONOMY").update(held=1)
    return booking.pk
