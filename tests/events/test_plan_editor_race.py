"""A hold racing the seat-map editor's save (issue 29, item 5), with real threads, each on its
own PostgreSQL connection.  The save takes seat 1-1-4 out of a plan on sale while a customer
holds it.  The save reads the state of the seats it takes out under their locks
(`plan_editing.lock_seats_to_take_out`), so the hold waits and then finds the seat gone; the
control reads them without the lock, the hold slips in between the read and the write, and a
held seat is left out of the plan: the lock is what prevents it."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connection, connections

from bookings.customer_holds import hold_seats
from bookings.errors import SeatUnavailable
from bookings.models import Passenger, Seat
from events import plan_editing
from events.models import VenueSeat
from events.plan_drawn import venue_drawing
from events.venues import save_drawn_plan
from tests.events.test_plan_editor import on_sale
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.concurrency]


def seats_held_outside_the_plan(event) -> list[str]:
    """Live passengers' seats that the venue plan no longer has (checked on the rows)."""
    plan = {
        (s, r, n)
        for s, r, n in VenueSeat.objects.filter(section__venue=event.venue).values_list(
            "section__name", "row", "number"
        )
    }
    live = Passenger.objects.filter(sale_id=event.sale_id, is_live=True, seat__isnull=False)
    return sorted(
        p.seat.seat_no
        for p in live.select_related("seat")
        if (p.seat.section, p.seat.row_label, p.seat.number) not in plan
    )


def without_seat_4_of_row_1(venue) -> str:
    drawing = venue_drawing(venue=venue)
    seats = drawing["sections"][0]["seats"]
    drawing["sections"][0]["seats"] = [s for s in seats if (s["row"], s["number"]) != ("1", 4)]
    return json.dumps(drawing)


def hold_waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def race(monkeypatch, *, guarded: bool):
    """The save reads the seats it takes out, then stops (`read`) until `go`; the hold starts
    once the save has read.  Returns (what the save did, what the hold did)."""
    event = on_sale()
    drawing = without_seat_4_of_row_1(event.venue)
    customer = UserFactory()
    read, go, hold_done = threading.Event(), threading.Event(), threading.Event()
    real = plan_editing.lock_seats_to_take_out

    def unlocked(*, sale_id, seat_nos):  # the control: the same read, no lock
        return Seat.objects.filter(sale_id=sale_id, seat_no__in=seat_nos).order_by("seat_no")

    def read_then_wait(**kwargs):
        seats = list((real if guarded else unlocked)(**kwargs))
        read.set()
        assert go.wait(30)
        return seats

    monkeypatch.setattr(plan_editing, "lock_seats_to_take_out", read_then_wait)
    outcome: dict[str, object] = {}

    def save():
        try:
            outcome["save"] = save_drawn_plan(venue=event.venue, drawing=drawing)
        except Exception as exc:
            outcome["save"] = exc
        finally:
            connections.close_all()

    def hold():
        try:
            assert read.wait(30)
            outcome["hold"] = hold_seats(
                customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-4"]
            )
        except Exception as exc:
            outcome["hold"] = exc
        finally:
            hold_done.set()
            connections.close_all()

    threads = [
        threading.Thread(target=save, daemon=True),
        threading.Thread(target=hold, daemon=True),
    ]
    for t in threads:
        t.start()
    try:
        assert read.wait(30)
        # Let the hold run as far as it can: to the seat lock (guarded) or to its commit.
        deadline = time.monotonic() + 30
        while not hold_done.is_set():
            if hold_waiting_for_a_lock():
                outcome["waited"] = True
                break
            assert time.monotonic() < deadline, "the hold neither finished nor waited"
            hold_done.wait(0.02)
    finally:
        go.set()
        for t in threads:
            t.join(60)
    return event, outcome


def test_a_hold_racing_the_save_waits_and_never_keeps_a_seat_the_plan_lost(monkeypatch):
    event, outcome = race(monkeypatch, guarded=True)
    assert not isinstance(outcome["save"], Exception), outcome
    assert outcome.get("waited"), outcome  # the hold queued for the seat lock the save held
    assert isinstance(outcome["hold"], SeatUnavailable), outcome  # then found it out of sale
    assert seats_held_outside_the_plan(event) == []
    assert Seat.objects.get(sale_id=event.sale_id, seat_no="1-1-4").status == "BLOCKED"


def test_control_without_the_seat_lock_a_held_seat_is_left_out_of_the_plan(monkeypatch):
    event, outcome = race(monkeypatch, guarded=False)
    assert not isinstance(outcome["save"], Exception), outcome
    assert not isinstance(outcome["hold"], Exception), outcome
    assert "waited" not in outcome  # nothing to wait for: it slipped in between
    assert seats_held_outside_the_plan(event) == ["1-1-4"]
