"""Issue 30, item 4, adaptive admission: with holds slowed by a delay injected into
PostgreSQL (a trigger that sleeps in every booking insert, so the real hold path is slow),
the adaptive room's rate backs off to its floor and no further; once the delay is removed
it recovers, up to its ceiling and no further.  Controls: a fixed-rate room under the same
delay keeps its rate, and without the delay the adaptive room never backs off.  Real Redis
carries the signal from the hold services to the tick, real PostgreSQL the lock waits."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
import redis
from django.db import connection, connections, transaction
from django.utils import timezone

from bookings.customer_holds import hold_seatless
from bookings.models import Booking
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, origin_health
from waitroom.models import AdmissionMode, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)

DELAY_SECONDS = 1.0  # far above a loaded machine's normal hold (up to ~160 ms seen in CI)
TARGET_MS = 500
FLOOR, CEILING, START = 10, 120, 60


@contextmanager
def slow_holds():
    """Every booking insert sleeps DELAY_SECONDS inside the hold's own transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION test_slow_hold() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN PERFORM pg_sleep({DELAY_SECONDS}); RETURN NEW; END $$;"
            "CREATE TRIGGER test_slow_hold BEFORE INSERT ON bookings_booking"
            " FOR EACH ROW EXECUTE FUNCTION test_slow_hold();"
        )
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(
                "DROP TRIGGER IF EXISTS test_slow_hold ON bookings_booking;"
                "DROP FUNCTION IF EXISTS test_slow_hold();"
            )


@pytest.fixture
def rooms(room_redis, settings):
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "ADAPTIVE_SECONDS": 5}
    made = {}
    for mode in (AdmissionMode.ADAPTIVE, AdmissionMode.FIXED):
        flight = small_flight(rows=20)  # 123 units: inventory is not the limit
        room = protect(flight, opens_at=timezone.now() - timedelta(minutes=1), rate=START)
        WaitingRoom.objects.filter(pk=room.pk).update(
            admission_mode=mode,
            adaptive_floor_per_minute=FLOOR,
            adaptive_ceiling_per_minute=CEILING,
            adaptive_target_hold_ms=TARGET_MS,
        )
        made[mode] = (flight, room)
    return made


def hold_some(flight, customers) -> None:
    for customer in customers:
        hold_seatless(customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1)


def tick(room, at) -> int:
    """One admission step `at`, after the adjustment period; the rate it left."""
    admission.admit_shoppers(room_id=room.pk, now=at, broadcast=False)
    room.refresh_from_db()
    return room.admit_per_minute


def test_the_rate_backs_off_under_slow_holds_and_recovers_after(rooms):
    flight, room = rooms[AdmissionMode.ADAPTIVE]
    people = iter(make_customers(60))
    at = timezone.now()
    rates = []
    with slow_holds():
        for _ in range(4):
            hold_some(flight, [next(people), next(people)])
            at += timedelta(seconds=6)
            rates.append(tick(room, at))
    assert rates == [30, 15, FLOOR, FLOOR]  # halved each period, never below the floor
    for _ in range(12):
        hold_some(flight, [next(people), next(people)])
        at += timedelta(seconds=6)
        rates.append(tick(room, at))
    recovered = rates[4:]
    assert recovered[:3] == [FLOOR + 12, FLOOR + 24, FLOOR + 36]  # a tenth of the ceiling each
    assert recovered[-1] == CEILING and max(recovered) == CEILING  # never above the ceiling


def test_the_rate_is_reconsidered_once_per_period(rooms):
    flight, room = rooms[AdmissionMode.ADAPTIVE]
    at = timezone.now()
    with slow_holds():
        hold_some(flight, make_customers(2))
        assert tick(room, at) == START // 2
        hold_some(flight, make_customers(2))
        # Later steps of the same period leave it, and the signal waits for the next one.
        assert tick(room, at + timedelta(seconds=1)) == START // 2
    assert tick(room, at + timedelta(seconds=6)) == START // 4


def test_control_a_fixed_room_keeps_its_rate_under_the_same_delay(rooms):
    flight, room = rooms[AdmissionMode.FIXED]
    at = timezone.now()
    with slow_holds():
        for _ in range(3):
            hold_some(flight, make_customers(2))
            at += timedelta(seconds=6)
            assert tick(room, at) == START
    # The delay was real: the signal the fixed room never reads shows it.
    signal = origin_health.take_hold_signal(sale_id=flight.sale_id)
    assert signal.holds == 6 and signal.mean_ms >= DELAY_SECONDS * 1000


def test_control_without_the_delay_the_adaptive_room_never_backs_off(rooms):
    flight, room = rooms[AdmissionMode.ADAPTIVE]
    at = timezone.now()
    rates = []
    for _ in range(3):
        hold_some(flight, make_customers(2))
        at += timedelta(seconds=6)
        rates.append(tick(room, at))
    assert rates == [START + 12, START + 24, START + 36]


def test_no_holds_is_no_evidence_and_too_busy_answers_back_off(rooms, room_redis):
    flight, room = rooms[AdmissionMode.ADAPTIVE]
    at = timezone.now() + timedelta(seconds=6)
    assert tick(room, at) == START  # nobody held: neither way
    origin_health.note_hold("hold_seconds", 0.01, {"sale": str(flight.sale_id), "reason": ""})
    origin_health.note_hold(
        "hold_seconds", 0.01, {"sale": str(flight.sale_id), "reason": "too-busy"}
    )
    assert tick(room, at + timedelta(seconds=6)) == START // 2  # one 503 is enough


def test_lock_waiters_come_from_pg_stat_activity_and_back_off(rooms, settings):
    """A second connection locks a booking row; three more wait for it (real lock waits)."""
    flight, room = rooms[AdmissionMode.ADAPTIVE]
    hold_some(flight, make_customers(1))
    booking_id = Booking.objects.filter(sale_id=flight.sale_id).values_list("pk", flat=True)[0]
    locked, release = threading.Event(), threading.Event()

    def lock_the_row(then) -> None:
        try:
            with transaction.atomic():
                list(Booking.objects.select_for_update().filter(pk=booking_id))
                then()
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=lock_the_row, args=(lambda: (locked.set(), release.wait(10)),))
    ]
    threads += [threading.Thread(target=lock_the_row, args=(lambda: None,)) for _ in range(3)]
    threads[0].start()
    assert locked.wait(10)
    for thread in threads[1:]:
        thread.start()
    try:
        deadline = time.monotonic() + 5
        while origin_health.lock_waiters() < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert origin_health.lock_waiters() >= 3
        settings.WAITING_ROOM = {**settings.WAITING_ROOM, "ADAPTIVE_LOCK_WAITERS": 2}
        assert tick(room, timezone.now() + timedelta(seconds=6)) == START // 2
    finally:
        release.set()
        for thread in threads:
            thread.join(10)
    assert origin_health.lock_waiters() == 0


def test_the_hold_path_fails_open_when_redis_is_gone(rooms, monkeypatch):
    flight, _room = rooms[AdmissionMode.ADAPTIVE]
    gone = redis.Redis(port=1, socket_connect_timeout=0.2)  # nothing listens there
    asked = []
    customers = make_customers(3)
    with monkeypatch.context() as patch:
        patch.setattr(origin_health, "_muted_until", 0.0)
        patch.setattr(origin_health.queue, "client", lambda: asked.append(1) or gone)
        hold_some(flight, customers)  # held, though the signal could not be written
        muted = origin_health._muted_until
    assert Booking.objects.filter(sale_id=flight.sale_id).count() == 3
    assert len(asked) == 1 and muted > 0  # one try, then the writer went quiet
