"""One Redis Cluster primary SIGKILLed in the middle of a sale (tests/redis_cluster.py).

Its replica takes over after the node timeout.  Meanwhile the hold filters fail open (every
hold goes to PostgreSQL, which decides), the sale goes on, nothing is oversold, no hold
exists that no client was told of; the waiting room's admission goes on from PostgreSQL and
nobody PostgreSQL knows as admitted is lost.  Figures: docs/reliability.md.
"""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from bookings import availability
from bookings.customer_holds import hold_seats
from bookings.errors import SeatUnavailable
from bookings.models import LIVE_STATUSES, Booking, Seat, SeatStatus
from flights.models import FareInventory
from tests.factories import FlightFactory, economy_only_layout
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining, queue, room_selectors
from waitroom.models import QueueEntry, QueueStatus

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 6


@pytest.fixture
def on_cluster(settings, redis_cluster):
    """The filters (on), the queue and the cache on the cluster; afterwards the killed node
    is brought back (it rejoins as a replica) and the cluster is whole again."""
    redis_cluster.wait_healthy()
    redis_cluster.point_settings_at(settings)
    settings.HOLD_FILTERS = {
        **settings.HOLD_FILTERS,
        "SEAT_GATE": True,
        "AVAILABILITY_COUNTER": True,
        "BACKOFF_SECONDS": 0.2,
    }
    availability._down_until = 0.0
    killed: list[int] = []
    yield redis_cluster, killed
    availability._down_until = 0.0
    for port in killed:
        redis_cluster.restart(port)
    redis_cluster.wait_healthy()
    redis_cluster.flush()


def promoted(cluster, key: str, old_port: int, *, timeout: float = 30) -> float:
    """Seconds until a live primary other than `old_port` serves `key`'s slot."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            client = cluster.client()
            try:
                port = int(client.get_node_from_key(key).port)
                client.ping(target_nodes=client.get_node_from_key(key))
            finally:
                client.close()
            if port != old_port:
                return time.monotonic() - start
        except Exception:
            pass
        time.sleep(0.05)
    raise AssertionError(f"no replica took over within {timeout} s")


def test_a_primary_killed_mid_sale_the_sale_goes_on_and_nothing_is_oversold(on_cluster):
    cluster, killed = on_cluster
    flight = FlightFactory(layout=economy_only_layout(rows=40, overbook_limit=0))  # 240 seats
    seats = [f"{row}{letter}" for row in range(1, 41) for letter in "ABCDEF"]
    customers = make_customers(THREADS * 60)
    told: list[tuple[int, str]] = []  # (booking id, seat) every client was told of
    times: list[float] = []  # when each of those holds returned
    lock = threading.Lock()
    stop = threading.Event()

    def shopper(mine: list) -> None:
        try:
            for customer in mine:
                if stop.is_set():
                    return
                seat = random.choice(seats)
                try:
                    booking = hold_seats(
                        customer=customer,
                        sale_id=flight.sale_id,
                        fare_class="ECONOMY",
                        seat_numbers=[seat],
                    )
                except SeatUnavailable:
                    continue
                with lock:
                    told.append((booking.pk, seat))
                    times.append(time.monotonic())
        finally:
            connection.close()

    gate_key = availability.gate_key(flight.sale_id, "1A")
    primary = cluster.primary_of(gate_key)
    threads = [
        threading.Thread(target=shopper, args=(customers[i::THREADS],)) for i in range(THREADS)
    ]
    for t in threads:
        t.start()
    # Kill only once the sale is under way: a loaded machine can take over a second for the
    # shoppers' first holds, and a fixed sleep then kills a primary before any sale began.
    under_way = time.monotonic() + 60
    while len(told) < 3 and time.monotonic() < under_way:
        time.sleep(0.05)
    before = len(told)
    killed_at = time.monotonic()
    cluster.kill(primary)
    killed.append(primary)
    failover = promoted(cluster, gate_key, primary)
    recovered_at = killed_at + failover
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join(120)

    during = sum(1 for t in times if killed_at <= t <= recovered_at)
    print(
        f"\nredis-cluster failover: {failover:.2f} s; holds before the kill {before}, "
        f"during the failover {during}, in all {len(told)}"
    )
    assert before > 0 and during > 0  # the sale went on while no primary served the slot

    # PostgreSQL: no seat twice, the inventory's count is the bookings', and every live hold
    # is one a client was told of (and the other way round).
    live = Booking.objects.filter(sale_id=flight.sale_id, status__in=LIVE_STATUSES)
    assert sorted(live.values_list("pk", flat=True)) == sorted(pk for pk, _ in told)
    taken = Seat.objects.filter(sale_id=flight.sale_id, status=SeatStatus.HELD)
    assert sorted(taken.values_list("seat_no", "booking_id")) == sorted(
        (seat, pk) for pk, seat in told
    )
    assert len({seat for _, seat in told}) == len(told)  # no seat sold twice
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    assert inventory.sold + inventory.held == len(told) <= inventory.capacity

    # The filters are back on the promoted replica: a rebuild corrects what the lost primary
    # (or the unreplicated last writes) left behind, and the gate refuses a held seat again.
    time.sleep(0.3)  # past BACKOFF_SECONDS
    assert availability.rebuild_open_counters() >= 1
    assert availability.counter_value(sale_id=flight.sale_id, fare_class="ECONOMY") == (
        inventory.capacity - len(told)
    )


def test_a_primary_killed_mid_admission_loses_nobody_admitted(on_cluster):
    cluster, killed = on_cluster
    flight = small_flight(rows=30)
    t0 = timezone.now() - timedelta(seconds=10)
    room = protect(flight, opens_at=t0, rate=60, max_inside=100, stay_seconds=600)
    customers = make_customers(12)
    for c in customers:
        joining.join_queue(room_id=room.pk, customer=c)
    admission.admit_shoppers(room_id=room.pk, now=t0)  # the shuffle
    first = admission.admit_shoppers(room_id=room.pk, now=t0 + timedelta(seconds=2)).admitted
    assert len(first) == 2

    index_key = queue.key(room.pk, "q")
    primary = cluster.primary_of(index_key)
    cluster.kill(primary)
    killed.append(primary)
    # Admission goes on from PostgreSQL while the slot has no primary.
    during = admission.admit_shoppers(room_id=room.pk, now=t0 + timedelta(seconds=4)).admitted
    assert len(during) == 2
    failover = promoted(cluster, index_key, primary)
    print(f"\nredis-cluster failover under the waiting room: {failover:.2f} s")

    after = admission.admit_shoppers(room_id=room.pk, now=t0 + timedelta(seconds=6)).admitted
    admitted = first + during + after
    assert len(set(admitted)) == 6
    for entry_id in admitted:  # nobody PostgreSQL knows as admitted is lost
        entry = QueueEntry.objects.get(pk=entry_id)
        assert entry.status == QueueStatus.ADMITTED
        status = room_selectors.queue_status(room=room, customer_id=entry.customer_id)
        assert status["status"] == "ADMITTED" and status["token"]
    # The waiting keep their order, with no gaps, on the promoted replica.
    waiting = QueueEntry.objects.filter(room=room, status=QueueStatus.WAITING)
    order = list(waiting.order_by("order_key").values_list("customer_id", flat=True))
    assert len(order) == 6
    positions = [room_selectors.queue_status(room=room, customer_id=c)["position"] for c in order]
    assert positions == list(range(1, 7))
