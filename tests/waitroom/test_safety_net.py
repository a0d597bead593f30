"""Issue 30, item 3, safety-net mode: a room without a scheduled rush stays dormant (holds
pass without a token) until hold attempts per second pass the threshold staff set; then it
switches itself on, once, admitting whoever is holding, and everyone new queues; once nobody
waits and the calm period is over, the tick puts it back to sleep.  Under a threaded rush,
with a control that shows the switch won more than once without its conditional update."""

from __future__ import annotations

import contextlib
import threading
import time
from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.utils import timezone

from bookings.customer_holds import hold_seatless
from bookings.models import Booking, BookingStatus
from tests.concurrency import run_concurrently
from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import admission, gate, joining, safety_net
from waitroom.errors import WaitingRoomRequired
from waitroom.models import Admission, QueueEntry, QueueStatus, WaitingRoom
from waitroom.tokens import issue_token

pytestmark = pytest.mark.django_db(transaction=True)

THRESHOLD = 5  # hold attempts in one second


@pytest.fixture
def net(room_redis, settings):
    no_limits(settings)
    flight = small_flight(rows=10)  # 63 units: inventory is not the limit
    room = protect(flight, opens_at=timezone.now() - timedelta(minutes=1), rate=60)
    WaitingRoom.objects.filter(pk=room.pk).update(
        safety_net=True, safety_net_holds_per_second=THRESHOLD, safety_net_calm_seconds=30
    )
    return flight, room


def shop(flight, customer):
    """What a hold entry point does: the gate, then the hold (no token: nobody queued)."""
    request = RequestFactory().post("/api/bookings")
    gate.require_admission(request=request, customer_id=customer.pk, sale_id=flight.sale_id)
    return hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
    )


def rush(flight, people, monkeypatch):
    wins = []
    switch_on = safety_net.switch_on

    def counted(**kwargs):
        won = switch_on(**kwargs)
        wins.append(won)
        return won

    monkeypatch.setattr(safety_net, "switch_on", counted)
    return run_concurrently([lambda p=p: shop(flight, p) for p in people]), wins


@pytest.mark.concurrency
def test_it_switches_itself_on_under_a_rush_and_off_after(net, monkeypatch):
    flight, room = net
    quiet = make_customers(1)[0]
    assert shop(flight, quiet).status == BookingStatus.HELD  # dormant: straight through
    room.refresh_from_db()
    assert room.safety_net_on_since is None

    inside = make_customers(1)[0]  # let in by the queue earlier: holds a token
    token = issue_token(
        room_id=room.pk, customer_id=inside.pk, expires_at=timezone.now() + timedelta(minutes=5)
    )
    people = make_customers(30)
    outcomes, wins = rush(flight, people, monkeypatch)
    room.refresh_from_db()
    assert room.safety_net_on_since is not None
    assert wins.count(True) == 1  # switched on exactly once
    assert set(outcomes.error_kinds) == {"WaitingRoomRequired"}
    # At most the threshold per second got through dormant (the rush, and the quiet one's
    # attempt, may span 2 seconds).
    assert THRESHOLD - 1 <= len(outcomes.results) <= 2 * THRESHOLD
    # Those holding when it switched on were admitted, each once, and may hold again.
    admitted = QueueEntry.objects.filter(room=room, status=QueueStatus.ADMITTED)
    admitted_ids = set(admitted.values_list("customer_id", flat=True))
    holders = set(
        Booking.objects.filter(sale_id=flight.sale_id, status=BookingStatus.HELD).values_list(
            "customer_id", flat=True
        )
    )
    assert quiet.pk in admitted_ids and admitted_ids <= holders
    assert Admission.objects.filter(room=room).count() == len(admitted_ids)
    assert shop(flight, quiet).status == BookingStatus.HELD
    # A token issued before the switch stays valid.
    request = RequestFactory().post("/api/bookings", HTTP_X_WAITING_ROOM_TOKEN=token)
    gate.require_admission(request=request, customer_id=inside.pk, sale_id=flight.sale_id)
    # Everyone new queues now; the tick lets them in by the rate.
    refused = [p for p in people if not Booking.objects.filter(customer=p).exists()]
    with pytest.raises(WaitingRoomRequired):
        shop(flight, refused[0])
    for person in refused:
        joining.join_queue(room_id=room.pk, customer=person)
    now = timezone.now()
    first = admission.admit_shoppers(room_id=room.pk, now=now)  # shuffles, admits a few
    assert 0 < len(first.admitted) < len(refused)
    room.refresh_from_db()
    assert room.safety_net_on_since is not None  # people still wait: it stays on

    # Nobody waits any more (all let in) and the calm period is over: dormant again.
    for second in range(1, 60):
        admission.admit_shoppers(room_id=room.pk, now=now + timedelta(seconds=second))
        if not QueueEntry.objects.filter(room=room, status=QueueStatus.WAITING).exists():
            break
    admission.admit_shoppers(room_id=room.pk, now=now + timedelta(seconds=61))
    room.refresh_from_db()
    assert room.safety_net_on_since is None
    latecomer = make_customers(1)[0]
    # Hold attempts are counted per wall-clock second: shop in a second after the rush's, or a
    # fast run counts the latecomer into the rush's second and rightly switches back on.
    time.sleep(1.1)
    assert shop(flight, latecomer).status == BookingStatus.HELD


@pytest.mark.concurrency
def test_control_without_the_conditional_update_it_switches_on_more_than_once(net, monkeypatch):
    """The guard is the conditional update (`safety_net_on_since IS NULL`).  Replaced by
    read-then-write, the same rush switches the room on several times and admits the
    holders several times over: the test above is able to fail."""
    flight, _room = net

    # Two callers meet between the read and the write (a loaded machine may otherwise start
    # the threads too far apart for the race the guard closes).
    meet = threading.Barrier(2, timeout=5)

    def unguarded(*, room_id, now):
        current = WaitingRoom.objects.get(pk=room_id)
        if current.safety_net_on_since is not None:
            return False
        with contextlib.suppress(threading.BrokenBarrierError):
            meet.wait()
        WaitingRoom.objects.filter(pk=room_id).update(safety_net_on_since=now)
        safety_net._admit_those_holding(current, now)
        return True

    monkeypatch.setattr(safety_net, "switch_on", unguarded)
    _outcomes, wins = rush(flight, make_customers(30), monkeypatch)
    assert wins.count(True) > 1


def test_it_switches_on_at_the_shoppers_threshold(net):
    flight, room = net
    WaitingRoom.objects.filter(pk=room.pk).update(
        safety_net_holds_per_second=None, safety_net_shoppers=2
    )
    first, second, third = make_customers(3)
    shop(flight, first)
    shop(flight, second)  # two holding now: the next attempt switches it on
    with pytest.raises(WaitingRoomRequired):
        shop(flight, third)
    room.refresh_from_db()
    assert room.safety_net_on_since is not None
    assert shop(flight, first).status == BookingStatus.HELD  # holding: admitted, goes on


def test_a_room_without_the_safety_net_never_lets_anyone_through(room_redis, settings):
    no_limits(settings)
    flight = small_flight()
    protect(flight)
    with pytest.raises(WaitingRoomRequired):
        shop(flight, make_customers(1)[0])
