"""Waitlists that know the party (issue 29, item 2): a seated entry carries the sections it
accepts and a price ceiling; freed seats go to the first entry they fit as a block side by
side (bookings.adjacency), inside the releasing transaction; an entry that cannot be served
keeps its place and a smaller party behind it may be served first (bookings.waitlist's
stated rule).  A party of 4 never gets 4 seats split by an aisle, on a plane or in a venue."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bookings import adjacency
from bookings.customer_holds import hold_seats
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, Seat, WaitlistEntry, WaitlistStatus
from bookings.waitlist import join_waitlist
from bookings.waitlist_selectors import waitlist_position
from events.services import set_single_seat_rule
from flights.models import FareClass
from flights.services import CabinLayout, CabinSection, a320_layout
from kernel.errors import InvalidRequest
from tests.api.conftest import client_for
from tests.bookings.test_best_available import hall_event
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db

EIGHT_ACROSS = CabinLayout(  # ABCD | EFGH
    sections=(CabinSection(FareClass.ECONOMY, rows=1, letters="ABCDEFGH", price=Decimal("100")),)
)


def sell_out(sale_id: int, fare_class: str) -> dict[str, Booking]:
    """Every seat of the class held by its own customer, one seat each."""
    seats = Seat.objects.filter(sale_id=sale_id, fare_class=fare_class).order_by("seat_no")
    return {
        s.seat_no: hold_seats(
            customer=UserFactory(), sale_id=sale_id, fare_class=fare_class, seat_numbers=[s.seat_no]
        )
        for s in seats
    }


def free(holds: dict[str, Booking], *seat_nos: str) -> None:
    for seat_no in seat_nos:
        cancel_hold(customer=holds[seat_no].customer, booking_id=holds[seat_no].pk)


def offered_seats(entry: WaitlistEntry) -> list[Seat]:
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.OFFERED, entry.status
    return list(Seat.objects.filter(booking_id=entry.offer_id).order_by("seat_no"))


def test_on_a_plane_a_party_of_four_waits_rather_than_cross_the_aisle():
    flight = FlightFactory(layout=EIGHT_ACROSS)
    holds = sell_out(flight.sale_id, "ECONOMY")
    four = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=4
    )
    two = join_waitlist(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=2
    )
    free(holds, "1C", "1D", "1E", "1F")  # four seats free, but the aisle runs between D and E
    four.refresh_from_db()
    assert four.status == WaitlistStatus.WAITING and waitlist_position(entry=four) == 1
    # The smaller party behind is served first, by the stated rule, side by side.
    pair = offered_seats(two)
    assert adjacency.is_block(pair) and {s.seat_no for s in pair} in ({"1C", "1D"}, {"1E", "1F"})
    free(holds, "1A", "1B", "1G", "1H")
    block = offered_seats(four)
    assert len(block) == 4 and adjacency.is_block(block)
    assert {s.seat_no for s in block} in ({"1A", "1B", "1C", "1D"}, {"1E", "1F", "1G", "1H"})


def test_in_a_venue_a_party_of_four_waits_rather_than_cross_the_aisle():
    event = hall_event(rule=False)  # rows of 2 x 4, the aisle after seat 4
    holds = sell_out(event.sale_id, "A")
    set_single_seat_rule(event_id=event.pk, keep=True)
    four = join_waitlist(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", party_size=4
    )
    free(holds, "1-1-3", "1-1-4", "1-1-5", "1-1-6")
    four.refresh_from_db()
    assert four.status == WaitlistStatus.WAITING
    free(holds, "1-2-1", "1-2-2", "1-2-3", "1-2-4")
    block = offered_seats(four)
    assert [s.seat_no for s in block] == ["1-2-1", "1-2-2", "1-2-3", "1-2-4"]
    assert adjacency.is_block(block)


def aisle_blind(a, b) -> bool:
    """Seats side by side whenever they share a row: what the engine did before it knew its
    aisles (the waitlist's `_best_seats` took 12C/12D as neighbours)."""
    return bool(a.row_key) and a.row_key == b.row_key


@pytest.mark.parametrize("where", ["plane", "venue"])
def test_control_blind_to_the_aisle_the_party_of_four_is_split_by_it(monkeypatch, where):
    if where == "plane":
        sale_id, fare_class = FlightFactory(layout=EIGHT_ACROSS).sale_id, "ECONOMY"
        across = ("1C", "1D", "1E", "1F")
    else:
        sale_id, fare_class = hall_event(rule=False).sale_id, "A"
        across = ("1-1-3", "1-1-4", "1-1-5", "1-1-6")
    holds = sell_out(sale_id, fare_class)
    four = join_waitlist(
        customer=UserFactory(), sale_id=sale_id, fare_class=fare_class, party_size=4
    )
    monkeypatch.setattr(adjacency, "side_by_side", aisle_blind)

    free(holds, *across)

    assert {s.seat_no for s in offered_seats(four)} == set(across)  # the aisle between them


def test_an_entry_gets_only_seats_in_its_sections():
    event = EventFactory()  # category B: Stalls rows 3-4 and the Balcony
    holds = sell_out(event.sale_id, "B")
    balcony = join_waitlist(
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="B",
        party_size=2,
        sections=["Balcony"],
    )
    anywhere = join_waitlist(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="B", party_size=2
    )
    free(holds, "1-3-1", "1-3-2")  # stalls: not for the first entry, which keeps its place
    balcony.refresh_from_db()
    assert balcony.status == WaitlistStatus.WAITING and waitlist_position(entry=balcony) == 1
    assert {s.seat_no for s in offered_seats(anywhere)} == {"1-3-1", "1-3-2"}
    free(holds, "2-A-1", "2-A-2")
    assert {s.section for s in offered_seats(balcony)} == {"Balcony"}


def test_an_entry_gets_no_seat_above_its_price_ceiling():
    flight = FlightFactory(layout=a320_layout(economy_overbook=0))  # rows 4-5: +15.00
    holds = sell_out(flight.sale_id, "ECONOMY")
    frugal = join_waitlist(
        customer=UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        party_size=2,
        max_seat_price=Decimal("89.00"),
    )
    free(holds, "4A", "4B")
    frugal.refresh_from_db()
    assert frugal.status == WaitlistStatus.WAITING
    free(holds, "20A", "20B")
    assert {s.seat_no for s in offered_seats(frugal)} == {"20A", "20B"}


def test_wishes_no_seat_could_meet_are_refused_at_the_door():
    event = EventFactory()
    sell_out(event.sale_id, "A")
    with pytest.raises(InvalidRequest):
        join_waitlist(
            customer=UserFactory(),
            sale_id=event.sale_id,
            fare_class="A",
            party_size=2,
            sections=["Balcony"],  # category A is in the stalls only
        )
    with pytest.raises(InvalidRequest):
        join_waitlist(
            customer=UserFactory(),
            sale_id=event.sale_id,
            fare_class="A",
            party_size=2,
            max_seat_price=Decimal("10.00"),
        )
    assert not WaitlistEntry.objects.exists()


def test_the_api_takes_and_shows_the_wishes(customer):
    event = EventFactory()
    sell_out(event.sale_id, "B")
    response = client_for(customer).post(
        f"/api/events/{event.pk}/waitlist",
        {"category": "B", "partySize": 2, "sections": ["Balcony"], "maxSeatPrice": "45.00"},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["sections"] == ["Balcony"] and body["maxSeatPrice"] == "45.00"
    bad = client_for(UserFactory()).post(
        f"/api/events/{event.pk}/waitlist",
        {"category": "B", "partySize": 2, "sections": ["Nowhere"]},
        format="json",
    )
    assert bad.status_code == 400
