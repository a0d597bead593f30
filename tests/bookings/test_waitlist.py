from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.errors import (
    AlreadyWaiting,
    HoldLimitReached,
    NotSoldOut,
    NotWaiting,
    SaleClosed,
    SeatUnavailable,
    SoldOut,
)
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, BookingStatus, WaitlistStatus
from bookings.waitlist import close_departed_waitlists, join_waitlist, leave_waitlist
from bookings.waitlist_selectors import waitlist_position
from flights.models import FareInventory, Seat, SeatStatus
from flights.services import block_seat, check_inventory, set_fare_limits, unblock_seat
from kernel.models import OutboxEvent
from tests.api.conftest import agent, book_on_behalf_permission  # noqa: F401
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def sold_out_flight(seats_rows=1):
    """6 economy seats, no overbooking, every seat held by its own customer."""
    flight = FlightFactory(layout=economy_only_layout(rows=seats_rows, overbook_limit=0))
    holders = []
    for seat in Seat.objects.filter(sale=flight.sale).order_by("row", "letter"):
        holder = UserFactory()
        holders.append(
            hold_seats(
                customer=holder,
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=[seat.seat_no],
            )
        )
    return flight, holders


def expire(booking):
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=booking.pk).update(expires_at=past)
    Seat.objects.filter(booking_id=booking.pk).update(held_until=past)
    expire_holds()


def test_join_only_when_sold_out_once_and_with_position(customer, flight):
    with pytest.raises(NotSoldOut):
        join_waitlist(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1)
    sold_out, _ = sold_out_flight()
    waiters = [UserFactory() for _ in range(3)]
    entries = [
        join_waitlist(customer=w, sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=1)
        for w in waiters
    ]
    assert [waitlist_position(entry=e) for e in entries] == [1, 2, 3]
    with pytest.raises(AlreadyWaiting):
        join_waitlist(
            customer=waiters[0], sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=2
        )
    leave_waitlist(customer=waiters[0], sale_id=sold_out.sale_id, fare_class="ECONOMY")
    with pytest.raises(NotWaiting):
        leave_waitlist(customer=waiters[0], sale_id=sold_out.sale_id, fare_class="ECONOMY")
    entries[2].refresh_from_db()
    assert waitlist_position(entry=entries[2]) == 2
    # Leaving is not forever: rejoining puts you at the back.
    back = join_waitlist(
        customer=waiters[0], sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=1
    )
    assert waitlist_position(entry=back) == 3


def test_five_waiting_two_cancellations_first_two_get_offers_and_lapse_passes_on():
    flight, holders = sold_out_flight()
    waiters = [UserFactory() for _ in range(5)]
    entries = [
        join_waitlist(customer=w, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1)
        for w in waiters
    ]

    cancel_hold(customer=holders[0].customer, booking_id=holders[0].pk)
    cancel_hold(customer=holders[1].customer, booking_id=holders[1].pk)

    for e in entries:
        e.refresh_from_db()
    assert [e.status for e in entries] == ["OFFERED", "OFFERED", "WAITING", "WAITING", "WAITING"]
    offers = [e.offer for e in entries[:2]]
    assert all(
        o.status == BookingStatus.HELD and o.customer_id == e.customer_id
        for o, e in zip(offers, entries, strict=False)
    )
    assert offers[0].expires_at - timezone.now() > timedelta(minutes=29)
    # The freed seats went straight to the offers: nobody else can take them.
    offered_seats = sorted(
        Seat.objects.filter(booking__in=offers).values_list("seat_no", flat=True)
    )
    assert offered_seats == ["1A", "1B"]
    outsider = UserFactory()
    with pytest.raises(SeatUnavailable):
        hold_seats(
            customer=outsider, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["1A"]
        )
    with pytest.raises(SoldOut):
        hold_seatless(customer=outsider, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)
    assert OutboxEvent.objects.filter(event_type="waitlist.offered").count() == 2

    expire(offers[0])  # unpaid offer lapses → the third in line gets it
    for e in entries:
        e.refresh_from_db()
    assert [e.status for e in entries] == ["LAPSED", "OFFERED", "OFFERED", "WAITING", "WAITING"]
    assert Seat.objects.get(sale=flight.sale, seat_no="1A").booking_id == entries[2].offer_id
    assert check_inventory(sale_id=flight.sale_id) == []


def test_party_of_three_behind_party_of_one_first_fit_policy():
    flight, holders = sold_out_flight()
    big = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=3
    )
    small = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )

    cancel_hold(customer=holders[5].customer, booking_id=holders[5].pk)  # 1 unit frees
    big.refresh_from_db()
    small.refresh_from_db()
    # The party of 3 does not fit; the party of 1 behind it is served, the 3 keep first place.
    assert (big.status, small.status) == ("WAITING", "OFFERED")
    assert waitlist_position(entry=big) == 1

    for h in holders[2:5]:  # 1C, 1D, 1E free: 3 units, but the aisle runs between C and D
        cancel_hold(customer=h.customer, booking_id=h.pk)
    big.refresh_from_db()
    assert big.status == "WAITING" and waitlist_position(entry=big) == 1
    for h in holders[0:2]:  # 1A, 1B: now 1A-1C is a block of three side by side
        cancel_hold(customer=h.customer, booking_id=h.pk)
    big.refresh_from_db()
    assert big.status == "OFFERED" and big.offer.seat_count == 3
    assert sorted(big.offer.passengers.values_list("seat__seat_no", flat=True)) == [
        "1A",
        "1B",
        "1C",
    ]
    assert check_inventory(sale_id=flight.sale_id) == []


def test_raising_limits_and_unblocking_serve_the_waitlist_first():
    flight, _ = sold_out_flight()
    first = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=2
    )
    second = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    inventory = FareInventory.objects.get(sale=flight.sale)
    set_fare_limits(inventory_id=inventory.pk, capacity=6, overbook_limit=2, price=inventory.price)
    first.refresh_from_db()
    assert first.status == "OFFERED"
    # No physical seat is free: the overbooking units are offered seatless.
    assert list(first.offer.passengers.values_list("seat", flat=True)) == [None, None]
    assert FareInventory.objects.get(sale=flight.sale).available == 0
    assert check_inventory(sale_id=flight.sale_id) == []
    second.refresh_from_db()
    assert second.status == "WAITING"


def test_unblocked_seat_goes_to_the_waitlist():
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    assert block_seat(sale_id=flight.sale_id, seat_no="1F")
    for seat in ["1A", "1B", "1C", "1D", "1E"]:
        hold_seats(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=[seat],
        )
    entry = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    unblock_seat(sale_id=flight.sale_id, seat_no="1F")
    entry.refresh_from_db()
    assert entry.status == "OFFERED"
    assert Seat.objects.get(sale=flight.sale, seat_no="1F").booking_id == entry.offer_id
    assert check_inventory(sale_id=flight.sale_id) == []


def test_expired_seat_is_not_taken_over_while_the_waitlist_waits():
    flight, holders = sold_out_flight()
    entry = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    past = timezone.now() - timedelta(seconds=1)
    Booking.objects.filter(pk=holders[0].pk).update(expires_at=past)
    Seat.objects.filter(booking=holders[0]).update(held_until=past)
    with pytest.raises(SeatUnavailable):
        hold_seats(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["1A"],
        )
    expire_holds()
    entry.refresh_from_db()
    assert (
        entry.status == "OFFERED"
        and Seat.objects.get(sale=flight.sale, seat_no="1A").booking_id == entry.offer_id
    )


def test_departed_flights_close_their_waitlists():
    flight, _ = sold_out_flight()
    entry = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    assert close_departed_waitlists() == 0
    flight.departure_at = timezone.now() - timedelta(minutes=1)
    flight.arrival_at = timezone.now() + timedelta(hours=1)
    flight.save()
    assert close_departed_waitlists() == 1
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.CLOSED
    with pytest.raises(SaleClosed):
        join_waitlist(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
        )
    assert Seat.objects.filter(sale=flight.sale, status=SeatStatus.AVAILABLE).count() == 0


# --- the hold cap (issue 24, item 9) -----------------------------------------------------------


def expire_together(bookings):
    """Lapse holds in one sweep, so their units are offered as one release."""
    past = timezone.now() - timedelta(seconds=1)
    ids = [b.pk for b in bookings]
    Booking.objects.filter(pk__in=ids).update(expires_at=past)
    Seat.objects.filter(booking_id__in=ids).update(held_until=past)
    assert expire_holds() == len(ids)


@pytest.fixture
def hold_cap(settings):
    def set_cap(cap: int) -> None:
        settings.SEATKEEPER = {**settings.SEATKEEPER, "MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE": cap}

    return set_cap


def test_an_offer_that_would_exceed_the_hold_cap_skips_to_the_next_entry(hold_cap):
    hold_cap(2)
    flight, holders = sold_out_flight()
    greedy = holders[0].customer  # already holds 1 unit (seat 1A)
    first = join_waitlist(
        customer=greedy, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=2
    )
    second = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )

    expire_together(holders[4:6])  # 2 units free: first in line, but 1 + 2 > the cap of 2

    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("WAITING", "OFFERED")
    assert waitlist_position(entry=first) == 1  # keeps its place
    held = Booking.objects.filter(customer=greedy, status=BookingStatus.HELD)
    assert sum(held.values_list("seat_count", flat=True)) == 1

    # Once its own hold is gone, the next release serves it, within the cap: 1A alone is no
    # pair side by side (the other free seat is 1F), so it is served when 1B frees too.
    cancel_hold(customer=greedy, booking_id=holders[0].pk)
    first.refresh_from_db()
    assert first.status == "WAITING" and waitlist_position(entry=first) == 1
    cancel_hold(customer=holders[1].customer, booking_id=holders[1].pk)
    first.refresh_from_db()
    assert first.status == "OFFERED" and first.offer.seat_count == 2
    assert sorted(first.offer.passengers.values_list("seat__seat_no", flat=True)) == ["1A", "1B"]
    assert check_inventory(sale_id=flight.sale_id) == []


def test_control_without_the_cap_in_the_way_the_first_entry_gets_the_offer(hold_cap):
    hold_cap(3)
    flight, holders = sold_out_flight()
    first = join_waitlist(
        customer=holders[0].customer, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=2
    )
    expire_together(holders[4:6])
    first.refresh_from_db()
    assert first.status == "OFFERED" and first.offer.seat_count == 2


def test_a_party_larger_than_the_hold_cap_cannot_join_unless_exempt(hold_cap, agent):  # noqa: F811
    hold_cap(1)
    flight, _ = sold_out_flight()
    with pytest.raises(HoldLimitReached):
        join_waitlist(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=3
        )
    # Travel agents hold for many people: the cap does not apply to them.
    entry = join_waitlist(
        customer=agent, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=3
    )
    assert entry.status == WaitlistStatus.WAITING
