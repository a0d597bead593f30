"""Best available and customers' picks racing (issue 29): real threads, each with its own
PostgreSQL connection.  After every committed hold, checked on the rows themselves: no seat
is held twice and no row holds a single seat the rule forbids.  The control switches the
guard off (the whole-row lock: only the picked seats are locked, their neighbours read
without a lock) and shows two picks, each fine alone, strand a seat together.
"""

from __future__ import annotations

import random
import threading
import time

import pytest
from django.db.models import Q

from bookings import customer_holds
from bookings.audit import check_inventory
from bookings.best_available import hold_best_available
from bookings.customer_holds import hold_seats
from bookings.errors import LeavesSingleSeat
from bookings.models import Passenger, Seat
from kernel.errors import DomainError
from kernel.locking import lock_seats
from tests.bookings.test_best_available import alone_seats, hall_event
from tests.concurrency import run_concurrently
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def overlaps(sale_id: int) -> list[int]:
    """Seats with more than one live passenger, or held by a booking they are not in."""
    live = Passenger.objects.filter(booking__sale_id=sale_id, is_live=True, seat__isnull=False)
    seat_ids = list(live.values_list("seat_id", flat=True))
    doubled = [s for s in set(seat_ids) if seat_ids.count(s) > 1]
    mismatched = [
        p.seat_id for p in live.select_related("seat") if p.seat.booking_id != p.booking_id
    ]
    return doubled + mismatched


def audited(sale_id: int, call, found: list):
    """Run `call`; once it has committed, look at the rows and keep what is wrong."""

    def run():
        result = call()
        found.extend(("alone", s) for s in alone_seats(sale_id))
        found.extend(("overlap", s) for s in overlaps(sale_id))
        return result

    return run


def test_concurrent_pickers_never_overlap_and_never_strand_a_seat():
    event = hall_event()  # 3 rows of 2 x 4: every stretch even, so nobody needs to strand
    sale_id, found = event.sale_id, []
    rng = random.Random(29)
    calls = []
    for i in range(24):
        customer = UserFactory()
        if i % 3:
            calls.append(
                lambda c=customer: hold_best_available(
                    customer=c, sale_id=sale_id, fare_class="A", quantity=2
                )
            )
        else:  # a customer's own pick of two: some fine, some stranding (refused)
            row, start = rng.choice((1, 2, 3)), rng.choice((1, 2, 3, 5, 6, 7))
            pick = [f"1-{row}-{start}", f"1-{row}-{start + 1}"]
            calls.append(
                lambda c=customer, p=pick: hold_seats(
                    customer=c, sale_id=sale_id, fare_class="A", seat_numbers=p
                )
            )
    outcomes = run_concurrently([audited(sale_id, c, found) for c in calls], threads=12)
    unexpected = [e for e in outcomes.errors if not isinstance(e, DomainError)]
    assert not unexpected, unexpected
    assert outcomes.results, outcomes.error_kinds  # holds really happened
    assert found == []
    assert alone_seats(sale_id) == set() and overlaps(sale_id) == []
    assert check_inventory(sale_id=sale_id) == []


def _slow_check(monkeypatch):
    """Both picks read their rows, then take their time deciding: a race window."""
    check = customer_holds.check_leaves_no_single_seat

    def slow(*args, **kwargs):
        time.sleep(0.5)
        return check(*args, **kwargs)

    monkeypatch.setattr(customer_holds, "check_leaves_no_single_seat", slow)


def _two_picks(sale_id: int):
    """1-1-1 + 1-1-2 and 1-1-4: each alone leaves no seat alone, together they strand 1-1-3."""
    start = threading.Barrier(2)

    def pick(seats):
        def call():
            start.wait(timeout=10)
            return hold_seats(
                customer=UserFactory(), sale_id=sale_id, fare_class="A", seat_numbers=seats
            )

        return call

    return [pick(["1-1-1", "1-1-2"]), pick(["1-1-4"])]


def test_two_picks_that_strand_a_seat_together_one_is_refused(monkeypatch):
    event = hall_event()
    _slow_check(monkeypatch)
    outcomes = run_concurrently(_two_picks(event.sale_id))
    assert len(outcomes.results) == 1, outcomes.errors
    assert [type(e) for e in outcomes.errors] == [LeavesSingleSeat]
    assert alone_seats(event.sale_id) == set()
    assert check_inventory(sale_id=event.sale_id) == []


def test_control_without_the_row_lock_the_two_picks_strand_a_seat(monkeypatch):
    """The same race with the guard off: only the picked seats locked, neighbours read
    without a lock.  Both holds commit and 1-1-3 is left alone: the row lock is what
    prevents it."""
    event = hall_event()
    _slow_check(monkeypatch)

    def picked_seats_only(*, sale_id, fare_class, seat_nos):
        locked = list(
            lock_seats(
                Seat.objects.select_related("sale").filter(sale_id=sale_id, seat_no__in=seat_nos)
            )
        )
        rows = {s.row_key for s in locked}
        neighbours = Seat.objects.filter(Q(sale_id=sale_id, row_key__in=rows)).exclude(
            seat_no__in=seat_nos
        )
        for seat in locked:
            seat.fare_price, seat.fare_currency = 50, "EUR"
        return locked + list(neighbours)

    monkeypatch.setattr(customer_holds, "_lock_requested_seats", picked_seats_only)
    outcomes = run_concurrently(_two_picks(event.sale_id))
    assert outcomes.errors == [] and len(outcomes.results) == 2
    assert alone_seats(event.sale_id) == {"1-1-3"}
