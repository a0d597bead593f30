"""Whether the seats a customer picked may be taken (bookings.customer_holds.hold_seats runs
these on the locked rows): free and of the fare class asked for, stranding no seat alone in
its row where the sale keeps that rule; a lapsed hold on one of them is taken over, but only
by *trying* its booking lock with SKIP LOCKED, since the seat locks are already held (lock
order, docs/architecture.md).
"""

from __future__ import annotations

from datetime import datetime

from bookings import adjacency, catalogue, lifecycle, waitlist
from bookings.errors import LeavesSingleSeat, SeatBlocked, SeatUnavailable, SeatWrongCabin
from bookings.models import Booking, BookingStatus, Seat, SeatStatus
from kernel.locking import lock_seats


def is_free(seat: Seat, now: datetime) -> bool:
    """Free for the single-seat rule: AVAILABLE, or held by a hold that has lapsed (anyone
    may take it over)."""
    return seat.status == SeatStatus.AVAILABLE or (
        seat.status == SeatStatus.HELD and seat.held_until is not None and seat.held_until <= now
    )


def check_leaves_no_single_seat(
    locked: list[Seat], *, fare_class: str, seat_nos: list[str], now: datetime
) -> None:
    """Refuse a pick that leaves a free seat alone in its row (bookings.adjacency), unless
    nothing else fits (no block of as many seats anywhere in the class strands nobody, the
    rule of best available); the refusal suggests such a block, in the same rows if there is
    one.  `locked` are the picked seats' whole rows, row-locked."""
    # Imported here: best_available builds on this module's seat rules.
    from bookings.best_available import ranked_blocks

    rows = adjacency.by_row(locked)
    free = {s.seat_no for s in locked if is_free(s, now)}
    stranded = adjacency.stranded_in(rows, free=free, taking=set(seat_nos))
    if not stranded:
        return
    others = list(
        ranked_blocks(
            sale_id=locked[0].sale_id,
            fare_class=fare_class,
            quantity=len(seat_nos),
            may_strand=False,
            now=now,
        )
    )
    if not others:
        return  # nothing else fits: this pick may leave the seat
    suggestion = next((b for key, b in others if key in rows), others[0][1])
    raise LeavesSingleSeat(stranded, suggestion=[s.seat_no for s in suggestion])


def check_seats_free(
    seats: list[Seat], *, fare_class: str, now: datetime, seat_nos: list[str]
) -> None:
    """Refuse seats of another class, blocked or taken ones; take over the expired holds of
    the others (they are free to anyone once their hold has lapsed)."""
    texts = catalogue.for_sale(seats[0].sale).texts
    wrong_cabin = [s.seat_no for s in seats if s.fare_class != fare_class]
    if wrong_cabin:
        raise SeatWrongCabin(wrong_cabin, fare_class, texts=texts)
    stale_booking_ids = {
        s.booking_id for s in seats if s.status == SeatStatus.HELD and s.held_until <= now
    }
    taken = [
        s.seat_no
        for s in seats
        if s.status != SeatStatus.AVAILABLE and s.booking_id not in stale_booking_ids
    ]
    blocked = [s.seat_no for s in seats if s.status == SeatStatus.BLOCKED]
    if blocked:  # first: taken seats may come free again, a blocked one does not
        raise SeatBlocked(blocked, texts=texts)
    if taken:
        raise SeatUnavailable(taken)
    if stale_booking_ids:
        _take_over_expired_holds(stale_booking_ids, now=now, seat_nos=seat_nos)


def _take_over_expired_holds(booking_ids: set[int], *, now: datetime, seat_nos: list[str]) -> None:
    # We already hold seat locks; waiting for a booking lock here could close a cycle with
    # the sweep or a late payment, which take the booking first (lock order,
    # docs/architecture.md).  So only try: if another transaction is closing that booking
    # right now, report the seat as taken for the moment.
    lockable = list(
        Booking.objects.select_for_update(skip_locked=True)
        .filter(pk__in=booking_ids, status=BookingStatus.HELD, expires_at__lte=now)
        .only("id", "sale_id", "fare_class", "booking_class", "seat_count")
        .order_by("id")
    )
    if len(lockable) != len(booking_ids):
        raise SeatUnavailable(seat_nos)
    # The stale bookings may own seats we did not ask for, some of them before ours in the
    # lock order: try those too rather than wait for them out of order.
    their_seats = Seat.objects.filter(booking_id__in=booking_ids)
    if len(lock_seats(their_seats, skip_locked=True)) != their_seats.count():
        raise SeatUnavailable(seat_nos)
    # Units freed by an expired hold belong to the waitlist first; the sweep will offer them.
    if any(waitlist.has_waiting(sale_id=b.sale_id, fare_class=b.fare_class) for b in lockable):
        raise SeatUnavailable(seat_nos)
    lifecycle.close_bookings(
        lockable, from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=now
    )
