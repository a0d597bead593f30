import random

import pytest

from bookings import adjacency
from bookings.customer_holds import hold_seatless, hold_seats
from bookings.lifecycle import cancel_hold, expire_holds
from bookings.models import Booking, BookingStatus, WaitlistEntry, WaitlistStatus
from bookings.waitlist import join_waitlist
from flights.models import FareInventory, Seat
from flights.services import check_inventory
from kernel.errors import DomainError
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def test_releases_and_new_holds_racing_never_offer_a_unit_twice():
    flight = FlightFactory(layout=economy_only_layout(rows=3, overbook_limit=2))  # 18 seats + 2
    seats = list(
        Seat.objects.filter(sale=flight.sale)
        .order_by("row", "letter")
        .values_list("seat_no", flat=True)
    )
    holders = [
        hold_seats(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[s]
        )
        for s in seats
    ]
    holders.append(
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
        )
    )
    rng = random.Random(7)
    entries = [
        join_waitlist(
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            party_size=rng.choice([1, 1, 2, 3]),
        )
        for _ in range(10)
    ]
    outsiders = [UserFactory() for _ in range(30)]

    def outsider_try(i):
        def call():
            if i % 3 == 0:
                return hold_seatless(
                    customer=outsiders[i],
                    sale_id=flight.sale_id,
                    fare_class="ECONOMY",
                    passengers=1,
                )
            return hold_seats(
                customer=outsiders[i],
                sale_id=flight.sale_id,
                fare_class="ECONOMY",
                seat_numbers=[seats[(i * 7) % len(seats)]],
            )

        return call

    calls = [lambda b=b: cancel_hold(customer=b.customer, booking_id=b.pk) for b in holders[:12]]
    calls += [outsider_try(i) for i in range(30)]
    calls += [lambda: expire_holds() for _ in range(3)]
    outcomes = run_concurrently(calls, threads=45)
    unexpected = [e for e in outcomes.errors if not isinstance(e, DomainError)]
    assert not unexpected, unexpected

    inventory = FareInventory.objects.get(sale=flight.sale)
    assert inventory.sold + inventory.held <= inventory.capacity + inventory.overbook_limit
    assert check_inventory(sale_id=flight.sale_id) == []
    offers = WaitlistEntry.objects.filter(status=WaitlistStatus.OFFERED)
    offer_ids = list(offers.values_list("offer_id", flat=True))
    assert len(offer_ids) == len(set(offer_ids))
    assert all(b.status == BookingStatus.HELD for b in Booking.objects.filter(pk__in=offer_ids))
    # Every offer is exactly the party's size, its seats side by side, and a waiting entry
    # never stands behind free units it would fit into (first fit): not enough units, or free
    # seats but no block of its size side by side among them (issue 29).
    for entry in offers.select_related("offer"):
        assert entry.offer.seat_count == entry.party_size
        assert adjacency.is_block([p.seat for p in entry.offer.passengers.all() if p.seat])
    left = FareInventory.objects.get(sale=flight.sale).available
    free = list(Seat.objects.filter(sale=flight.sale, status="AVAILABLE"))
    for entry in WaitlistEntry.objects.filter(status=WaitlistStatus.WAITING):
        fits = entry.party_size <= left and (
            not free or any(adjacency.blocks(free, entry.party_size))
        )
        assert not fits, (entry.party_size, left, [s.seat_no for s in free])
    assert len(entries) == 10


# --- an offer racing the customer leaving (issue 25: a control for the offer's guard) ---------


def _offer_racing_a_leave(monkeypatch, *, claim_entries=None):
    """One seat is released while the first waiting customer leaves.  The release pauses
    after reading the entries (up to 1 s) for the leave to commit, which is exactly the
    interleaving the entry lock exists for.  Returns (leave outcome, entry, next entry)."""
    import threading

    from bookings import holding, waitlist
    from bookings.waitlist import leave_waitlist

    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    holders = [
        hold_seats(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=[s]
        )
        for s in Seat.objects.filter(sale=flight.sale).values_list("seat_no", flat=True)
    ]
    leaver, behind = UserFactory(), UserFactory()
    first = join_waitlist(
        customer=leaver, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    second = join_waitlist(
        customer=behind, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    if claim_entries is not None:
        monkeypatch.setattr(waitlist, "_claim_waiting_entries", claim_entries)

    entries_read, leave_done = threading.Event(), threading.Event()
    real_cap_check = holding.may_offer_within_hold_cap

    def paused_cap_check(**kwargs):
        entries_read.set()
        leave_done.wait(timeout=1.0)  # with the lock, the leave is blocked: go on after 1 s
        return real_cap_check(**kwargs)

    monkeypatch.setattr(holding, "may_offer_within_hold_cap", paused_cap_check)

    def release():
        cancel_hold(customer=holders[0].customer, booking_id=holders[0].pk)

    def leave():
        entries_read.wait(timeout=10)
        try:
            return leave_waitlist(customer=leaver, sale_id=flight.sale_id, fare_class="ECONOMY")
        finally:
            leave_done.set()

    outcomes = run_concurrently([release, leave])
    first.refresh_from_db()
    second.refresh_from_db()
    return outcomes, first, second


def test_an_offer_and_the_customer_leaving_never_both_win(monkeypatch):
    outcomes, first, second = _offer_racing_a_leave(monkeypatch)
    # The release locked the entry before the leave began, so the leave waited for it: the
    # offer won, and the leave was refused (an offer is a normal hold from then on).
    assert [type(e).__name__ for e in outcomes.errors] == ["NotWaiting"]
    assert first.status == WaitlistStatus.OFFERED and first.offer_id is not None
    assert second.status == WaitlistStatus.WAITING
    assert Booking.objects.get(pk=first.offer_id).status == BookingStatus.HELD


def test_control_without_the_entry_lock_a_customer_who_left_gets_the_offer(monkeypatch):
    from bookings.models import WaitlistEntry

    def claim_without_lock(*, sale_id, fare_class):
        return list(
            WaitlistEntry.objects.filter(
                sale_id=sale_id, fare_class=fare_class, status=WaitlistStatus.WAITING
            ).order_by("id")
        )

    outcomes, first, second = _offer_racing_a_leave(monkeypatch, claim_entries=claim_without_lock)
    assert not outcomes.errors, outcomes.errors
    # Both won: the leave answered LEFT, and the entry was then offered the seat anyway,
    # ahead of the customer still waiting behind it.
    left = [r for r in outcomes.results if isinstance(r, WaitlistEntry)]
    assert [r.status for r in left] == [WaitlistStatus.LEFT]
    assert first.status == WaitlistStatus.OFFERED and first.offer_id is not None
    assert second.status == WaitlistStatus.WAITING
