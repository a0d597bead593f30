"""Engine seats know their neighbours (issue 29, item 0): cabins from their layout (the aisle
between C and D), venues from their plan (aisles and gaps), kept by the data migration for
seats that existed before, and used by every "adjacent seats" rule."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bookings import adjacency
from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus, Sale, Seat
from bookings.seat_changes import seats_together
from tests.bookings.test_sale_migration import latest, migrate
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory, economy_only_layout

BEFORE = [
    ("bookings", "0015_nested_booking_classes"),
    ("events", "0004_category_colour_contrast"),
    ("flights", "0010_online_checkin"),
]
NEIGHBOUR_FIELDS = ("seat_no", "row_key", "place", "quality")


def seats_of(sale_id: int) -> dict[str, Seat]:
    return {s.seat_no: s for s in Seat.objects.filter(sale_id=sale_id)}


@pytest.mark.django_db
def test_a_cabin_aisle_parts_c_from_d_and_a_wide_business_seat_leaves_no_gap():
    flight = FlightFactory()  # A320: business ACDF, economy ABCDEF
    seats = seats_of(flight.sale_id)
    assert adjacency.side_by_side(seats["12A"], seats["12B"])
    assert adjacency.side_by_side(seats["12B"], seats["12C"])
    assert not adjacency.side_by_side(seats["12C"], seats["12D"])  # the aisle
    assert adjacency.side_by_side(seats["12D"], seats["12E"])
    assert not adjacency.side_by_side(seats["12C"], seats["13C"])  # another row
    assert adjacency.side_by_side(seats["1A"], seats["1C"])  # business: no B between
    assert not adjacency.side_by_side(seats["1C"], seats["1D"])
    assert adjacency.is_block([seats["12C"], seats["12A"], seats["12B"]])
    assert not adjacency.is_block([seats["12C"], seats["12D"]])


@pytest.mark.django_db
def test_a_venue_aisle_and_a_section_edge_are_no_neighbours():
    event = EventFactory(single_seat_rule=True)  # Stalls: 6 a row, aisle after 3
    seats = seats_of(event.sale_id)
    sale = Sale.objects.get(pk=event.sale_id)
    assert sale.keeps_no_single_seats
    assert seats["1-1-2"].row_key == "1-1"
    assert adjacency.side_by_side(seats["1-1-2"], seats["1-1-3"])
    assert not adjacency.side_by_side(seats["1-1-3"], seats["1-1-4"])  # the aisle
    assert not adjacency.side_by_side(seats["1-1-3"], seats["1-2-3"])  # rows
    # The default quality is the distance from the stage centre: the middle front is best.
    assert seats["1-1-3"].quality < seats["1-1-1"].quality < seats["1-4-1"].quality
    assert seats["1-1-1"].quality < seats["2-A-1"].quality  # the balcony is behind the stalls


@pytest.mark.django_db
def test_party_seating_never_splits_a_party_over_the_aisle():
    flight = FlightFactory(layout=economy_only_layout(rows=2))
    seats = seats_of(flight.sale_id)
    free = [seats[n] for n in ("1B", "1C", "1D", "2D", "2E")]
    assert {s.seat_no for s in seats_together(free, 2)} == {"1B", "1C"}
    free = [seats[n] for n in ("1C", "1D", "2D", "2E")]
    assert {s.seat_no for s in seats_together(free, 2)} == {"2D", "2E"}


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_neighbours_of_live_seats_and_goes_back():
    flight = FlightFactory(layout=economy_only_layout(rows=2))
    event = EventFactory(single_seat_rule=True)
    customer = UserFactory()
    held = hold_seats(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-1", "1-1-2", "1-1-3"],
    )
    expected = {
        sale_id: sorted(Seat.objects.filter(sale_id=sale_id).values_list(*NEIGHBOUR_FIELDS))
        for sale_id in (flight.sale_id, event.sale_id)
    }
    try:
        old = migrate(BEFORE)
        old_seat = old.get_model("bookings", "Seat")
        assert "row_key" not in {f.name for f in old_seat._meta.get_fields()}
        # The live hold is still there on the old schema, and again after the way forward.
        assert old_seat.objects.filter(booking_id=held.pk).count() == 3
        migrate(latest())
    finally:
        migrate(latest())
    for sale_id, rows in expected.items():
        assert sorted(Seat.objects.filter(sale_id=sale_id).values_list(*NEIGHBOUR_FIELDS)) == rows
    assert Sale.objects.get(pk=event.sale_id).keeps_no_single_seats
    assert not Sale.objects.get(pk=flight.sale_id).keeps_no_single_seats
    booking = Booking.objects.get(pk=held.pk)
    assert booking.status == BookingStatus.HELD and booking.expires_at > timezone.now()
    assert set(Seat.objects.filter(booking=booking).values_list("seat_no", flat=True)) == {
        "1-1-1",
        "1-1-2",
        "1-1-3",
    }
