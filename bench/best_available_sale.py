"""Scenario (f) of bench/flash_sale.py (issue 29): 100 clients ask for "the best 2 seats in
category A" of one event, through `POST /api/bookings/best-available`, and the audit reads
the rows back from PostgreSQL.

The event is built with the checkout's own services, as the tests' factories build one
(events.services: a venue plan from a grid, price categories, category assignments, on sale)
and keeps the single-seat rule (`set_single_seat_rule(keep=True)`).  Its one section is all
category A, with two aisles per row, so the rows are stretches of 7, 10 and 7 seats: odd
stretches, where a careless pair would leave a seat alone.

The audit, on the rows themselves (bookings_seat and bookings_passenger, after the load):
* no overlap: no seat under two live passengers, every live passenger's seat points back at
  its booking (and is HELD), every booking holds exactly `quantity` seats;
* every booking's seats are one block: one row, side by side, no aisle between
  (bookings.adjacency.is_block);
* no forbidden stranded seat: each row is replayed from all-free, its bookings in id order
  (the exact order of that row's holds: a hold locks its whole row before its booking row is
  inserted, and keeps the lock to commit), and `adjacency.stranded_by` says which seats each
  hold left alone.  The rule allows that only when no block that strands nobody is left
  anywhere.  The scenario is sized so that such blocks never run out (about five times the
  blocks the clients ask for; the audit prints how many are left at the end), so any
  stranding hold while blocks that strand nobody remain at the end is a failure.  If none
  remained at the end, strandings are listed as the rule's fallback and do not fail.
"""

from __future__ import annotations

import math
import uuid
from datetime import timedelta
from decimal import Decimal
from typing import Any

CATEGORY = "A"
QUANTITY = 2
SEATS_PER_ROW = 24
AISLES = "7, 17"  # stretches of 7, 10 and 7 seats


def new_event(*, blocks_asked: int):
    """A fresh event on sale with one section of category A: a row for every four blocks
    asked (24 seats, at least five blocks of 2 that strand nobody whatever the order of the
    holds), so the blocks that strand nobody never run out."""
    from django.utils import timezone

    from events.models import EventCategory, Venue
    from events.services import (
        AssignmentSpec,
        PriceCategorySpec,
        assign_categories,
        create_event,
        put_event_on_sale,
        set_single_seat_rule,
    )
    from events.venues import build_venue_plan_from_grid

    rows = max(20, math.ceil(blocks_asked / 4))
    run = uuid.uuid4().hex[:6]
    venue = Venue.objects.create(
        name=f"Bench hall {run}", city="Berlin", address="Benchstraße 1", time_zone="Europe/Berlin"
    )
    build_venue_plan_from_grid(
        venue=venue,
        description=(
            "stage: top\n"
            f"Section Stalls: rows 1-{rows} x seats 1-{SEATS_PER_ROW}; aisle after {AISLES}\n"
        ),
    )
    event = create_event(
        venue=venue,
        name=f"Flash concert {run}",
        category=EventCategory.CONCERT,
        starts_at=timezone.now() + timedelta(days=30),
        on_sale_at=timezone.now() - timedelta(days=1),
        price_categories=[PriceCategorySpec(code=CATEGORY, name="Stalls", price=Decimal("80.00"))],
    )
    assign_categories(event_id=event.pk, assignments=[AssignmentSpec(CATEGORY, "Stalls")])
    put_event_on_sale(event_id=event.pk)
    set_single_seat_rule(event_id=event.pk, keep=True)
    event.refresh_from_db()
    return event, rows


def load_spec(*, base_url: str, event_id: int, tokens: list[str], asks: int, timeout: float):
    return {
        "base_url": base_url,
        "kind": "best",
        "event_id": event_id,
        "category": CATEGORY,
        "quantity": QUANTITY,
        "asks": asks,
        "tokens": tokens,
        "requests": len(tokens) * asks,
        "timeout": timeout,
    }


def audit_rows(sale_id: int) -> tuple[bool, str]:
    """The audit of the module docstring: (ok, one line)."""
    from django.db.models import Count

    from bookings import adjacency
    from bookings.models import Booking, BookingStatus, Passenger, Seat, SeatStatus

    problems: list[str] = []
    live = [BookingStatus.HELD, BookingStatus.CONFIRMED]
    doubled = (
        Passenger.objects.filter(booking__sale_id=sale_id, booking__status__in=live)
        .exclude(seat=None)
        .values("seat_id")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
    )
    problems += [f"seat {row['seat_id']} under {row['n']} live bookings" for row in doubled]
    seats = {s.pk: s for s in Seat.objects.filter(sale_id=sale_id)}
    taken: dict[int, list] = {}
    for booking_id, seat_id in Passenger.objects.filter(
        booking__sale_id=sale_id, booking__status__in=live
    ).values_list("booking_id", "seat_id"):
        seat = seats.get(seat_id)
        if seat is None or seat.booking_id != booking_id or seat.status != SeatStatus.HELD:
            problems.append(f"booking {booking_id}: seat {seat_id} does not point back at it")
            continue
        taken.setdefault(booking_id, []).append(seat)
    for booking_id, block in taken.items():
        if len(block) != QUANTITY or not adjacency.is_block(block):
            problems.append(f"booking {booking_id}: {sorted(s.seat_no for s in block)} no block")
    stray = Seat.objects.filter(sale_id=sale_id).exclude(status=SeatStatus.AVAILABLE).count()
    if stray != sum(len(b) for b in taken.values()):
        problems.append(f"{stray} seats not AVAILABLE, {sum(map(len, taken.values()))} booked")
    strandings, left = _replay(list(seats.values()), taken)
    if strandings and left:
        problems += [f"booking {b} stranded {sorted(s)}" for b, s in strandings[:10]]
    fallback = " (the fallback: none that strands nobody was left)" if not left else ""
    booked = Booking.objects.filter(sale_id=sale_id, status__in=live).count()
    text = (
        f"{booked} live bookings, {sum(map(len, taken.values()))} seats, no overlap "
        f"{'violated' if any('live bookings' in p for p in problems) else 'OK'}; "
        f"holds that stranded a seat: {len(strandings)}"
        f"{fallback if strandings else ''}"
        f"; blocks of {QUANTITY} that strand nobody left at the end: {left}"
    )
    return not problems, ("OK " if not problems else "FAILED ") + "; ".join([text, *problems])


def _replay(seats: list, taken: dict[int, list]) -> tuple[list[tuple[int, set[str]]], int]:
    """Each row from all-free, its bookings in id order: [(booking, seats it left alone)],
    and how many blocks that strand nobody the final rows still offer."""
    from bookings import adjacency

    rows = adjacency.by_row(seats)
    free = {s.seat_no for s in seats}
    strandings = []
    for booking_id in sorted(taken):
        block = taken[booking_id]
        numbers = {s.seat_no for s in block}
        row = rows.get(block[0].row_key, [])
        stranded = adjacency.stranded_by(row, free=free, taking=numbers)
        if stranded:
            strandings.append((booking_id, stranded))
        free -= numbers
    left = sum(
        1
        for row in rows.values()
        for block in adjacency.blocks([s for s in row if s.seat_no in free], QUANTITY)
        if not adjacency.stranded_by(row, free=free, taking={s.seat_no for s in block})
    )
    return strandings, left


def compare_with_a(results: dict[str, Any]) -> None:
    """(f)'s rate beside (a)'s, when both ran."""
    a, f = results.get("a"), results.get("f")
    if not (a and f):
        return
    print(
        f"  (f) best-available holds/s {f['wins_per_s']:.1f} ({f['req_per_s']:.1f} req/s, "
        f"{QUANTITY} seats each) beside (a) seatless holds/s {a['wins_per_s']:.1f} "
        f"({a['req_per_s']:.1f} req/s): {f['wins_per_s'] / a['wins_per_s']:.0%} of (a)",
        flush=True,
    )
