"""Issue 30's scenarios for bench/waiting_room.py (`--scenario bots|adaptive|sold-out`),
against the bench's own database and Redis (set up by waiting_room.main).

* bots: 200 fresh bot accounts from 5 addresses (five /24s) and 200 humans (months-old
  accounts with a verified address) from 200 addresses each take a pre-queue place of a
  proof-of-work room; every proof is really solved (hashlib's scrypt with a tiny cost, so
  the tries, not the hash's price, are what is measured, as in tests/waitroom).  Prints the
  work paid: the sum of 2^difficulty and the tries made, per side.
* adaptive: an adaptive room (floor 10, ceiling 120, 60/min to start, target 150 ms); real
  holds on its sale, with a PostgreSQL trigger sleeping 400 ms in every booking insert for
  the first periods, then without.  Prints each period's mean hold time and the rate the
  admission step set (its clock stepped one ADAPTIVE_SECONDS period at a time).
* sold-out: N customers wait in an open room with a queue websocket each (uvicorn, real
  channel layer); the sale sells out and the admission step that sees it publishes the news.
  Prints how many sockets heard "queue closed" within 1 s of the step starting.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import timedelta


def bots() -> None:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from accounts.models import EmailAddress
    from tests.factories import FlightFactory, economy_only_layout
    from waitroom import joining, proof_of_work, staff
    from waitroom.models import WaitingRoom

    settings.WAITING_ROOM.update(
        POW_SCRYPT_N=16,
        POW_SCRYPT_R=1,
        POW_BASE_BITS=0,
        JOINS_PER_ADDRESS_PER_MINUTE=10**6,
        JOINS_PER_ACCOUNT_PER_MINUTE=10**6,
    )
    User = get_user_model()
    tag = time.time_ns()
    flight = FlightFactory(layout=economy_only_layout(rows=2, overbook_limit=3))
    room = staff.open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() + timedelta(hours=1),
        admit_per_minute=60,
        max_inside=100,
    )
    WaitingRoom.objects.filter(pk=room.pk).update(require_proof_of_work=True)
    room.refresh_from_db()
    humans = [
        User.objects.create(username=f"h{tag}-{i}", email=f"h{tag}-{i}@example.org")
        for i in range(200)
    ]
    User.objects.filter(pk__in=[h.pk for h in humans]).update(
        date_joined=timezone.now() - timedelta(days=90)
    )
    for human in humans:
        EmailAddress.objects.create(user=human, email=human.email, verified_at=timezone.now())
    humans = list(User.objects.filter(pk__in=[h.pk for h in humans]).order_by("id"))
    farm = [User.objects.create(username=f"b{tag}-{i}") for i in range(200)]

    def pay_and_join(customer, address: str) -> tuple[int, int]:
        issued = proof_of_work.issue_challenge(room=room, customer=customer, address=address)
        n = 0
        while (
            proof_of_work.leading_zero_bits(proof_of_work.work_of(issued.challenge, str(n)))
            < issued.difficulty
        ):
            n += 1
        joining.join_queue(
            room_id=room.pk, customer=customer, address=address, proof=(issued.challenge, str(n))
        )
        return 2**issued.difficulty, n + 1

    sides = {}
    started = time.perf_counter()
    for name, people, address in (
        ("humans (200 addresses)", humans, lambda i: f"10.{i // 200}.{i % 200}.9"),
        ("bots (5 addresses)", farm, lambda i: f"198.51.{i % 5}.{7 + i // 5}"),
    ):
        paid = [pay_and_join(person, address(i)) for i, person in enumerate(people)]
        sides[name] = (sum(w for w, _ in paid), sum(t for _, t in paid), len(paid))
    print(f"bot scenario ({time.perf_counter() - started:.1f} s, every proof solved):")
    for name, (work, tries, places) in sides.items():
        print(f"  {name:24} places {places}  work sum(2^bits) {work:>9}  tries {tries:>9}")
    (hw, ht, _), (bw, bt, _) = sides.values()
    print(f"  bots pay {bw / hw:.1f}x the work (2^bits) and {bt / ht:.1f}x the tries of humans")


def adaptive() -> None:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from bookings.customer_holds import hold_seatless
    from tests.factories import FlightFactory, UserFactory, economy_only_layout
    from waitroom import admission, staff
    from waitroom.models import AdmissionMode, WaitingRoom

    period = settings.WAITING_ROOM["ADAPTIVE_SECONDS"]
    flight = FlightFactory(layout=economy_only_layout(rows=30, overbook_limit=3))
    room = staff.open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=1000,
    )
    WaitingRoom.objects.filter(pk=room.pk).update(
        admission_mode=AdmissionMode.ADAPTIVE,
        adaptive_floor_per_minute=10,
        adaptive_ceiling_per_minute=120,
        adaptive_target_hold_ms=150,
    )

    def slow(on: bool) -> None:
        with connection.cursor() as cursor:
            if on:
                cursor.execute(
                    "CREATE OR REPLACE FUNCTION bench_slow_hold() RETURNS trigger"
                    " LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.4); RETURN NEW; END $$;"
                    "CREATE TRIGGER bench_slow_hold BEFORE INSERT ON bookings_booking"
                    " FOR EACH ROW EXECUTE FUNCTION bench_slow_hold();"
                )
            else:
                cursor.execute("DROP TRIGGER IF EXISTS bench_slow_hold ON bookings_booking")

    at = timezone.now()
    print(f"adaptive scenario (floor 10, ceiling 120, target 150 ms, period {period} s):")
    slow(True)
    try:
        for step in range(16):
            if step == 5:
                slow(False)
            times = []
            for customer in [UserFactory() for _ in range(3)]:
                started = time.perf_counter()
                hold_seatless(
                    customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
                )
                times.append((time.perf_counter() - started) * 1000)
            at += timedelta(seconds=period)
            admission.admit_shoppers(room_id=room.pk, now=at, broadcast=False)
            room.refresh_from_db()
            phase = "delay 400 ms" if step < 5 else "no delay    "
            print(
                f"  period {step + 1:2}  {phase}  holds mean {statistics.mean(times):6.0f} ms"
                f"  -> rate {room.admit_per_minute:3}/min"
            )
    finally:
        slow(False)


def sold_out(n: int, web_workers: int) -> None:
    import os

    from django.contrib.auth import get_user_model

    from bench.waiting_room import ROOT, SERVER_ENV, free_port, prepare, stop_stack, uvicorn
    from waitroom import admission, joining

    flight, room, customers = prepare(n, opens_in=-1, rate=1, max_inside=1, stay=600, rows=2)
    users = get_user_model().objects.in_bulk([c.id for c in customers])
    for customer in customers:
        joining.join_queue(room_id=room.pk, customer=users[customer.id])
    admission.admit_shoppers(room_id=room.pk)  # the shuffle (and 1 admitted)
    port = free_port()
    logs = ROOT / "test-artifacts"
    logs.mkdir(exist_ok=True)
    server = uvicorn(port, web_workers, {**os.environ, **SERVER_ENV}, logs / "bench-wr-soldout.log")
    try:
        _wait_for(port)
        heard = asyncio.run(
            _listen(port, room, customers, sell_out=lambda: _sell_out(room, flight))
        )
    finally:
        stop_stack([server])
    connected, latencies = heard
    within = sum(1 for x in latencies if x <= 1.0)
    print(f"sold-out scenario: {n} waiting, {connected} websockets connected")
    if latencies:
        latencies.sort()
        print(
            f"  heard 'sold out, queue closed': {len(latencies)}; within 1 s: {within}"
            f"  (p50 {latencies[len(latencies) // 2] * 1000:.0f} ms,"
            f" p99 {latencies[int(len(latencies) * 0.99) - 1] * 1000:.0f} ms,"
            f" max {latencies[-1] * 1000:.0f} ms, from the admission step's start)"
        )


def _sell_out(room, flight) -> float:
    """Every unit sold (the bench's own sale: the inventory row is set, not bought), then
    the admission step that sees it; returns the step's start (perf_counter)."""
    from django.db.models import F

    from bookings.models import Inventory
    from waitroom import admission

    Inventory.objects.filter(sale_id=flight.sale_id).update(
        sold=F("capacity") + F("overbook_limit"), held=0
    )
    started = time.perf_counter()
    admission.admit_shoppers(room_id=room.pk)
    return started


def _wait_for(port: int) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise SystemExit("uvicorn did not come up; see test-artifacts/bench-wr-soldout.log")


async def _listen(port, room, customers, *, sell_out) -> tuple[int, list[float]]:
    import json

    import websockets

    ready, heard_at = [], []
    opened = asyncio.Semaphore(48)
    go = asyncio.Event()
    done = asyncio.Event()

    async def one(customer):
        async with opened:
            ws = await websockets.connect(
                f"ws://127.0.0.1:{port}/ws/waiting-room/{room.pk}/",
                origin=f"http://127.0.0.1:{port}",
                additional_headers={"Cookie": f"sessionid={customer.session}"},
                open_timeout=120,
                ping_interval=None,
                max_queue=None,
            )
            await ws.recv()  # the snapshot: this page is waiting
        ready.append(1)
        try:
            while not done.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
                except TimeoutError:
                    continue
                if json.loads(raw).get("queueClosed") and go.is_set():
                    heard_at.append(time.perf_counter())
                    return
        finally:
            await ws.close()

    tasks = [asyncio.create_task(one(c)) for c in customers]
    deadline = time.monotonic() + 300
    while len(ready) < len(customers) and time.monotonic() < deadline:
        if all(t.done() for t in tasks):
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)
    go.set()
    started = await asyncio.to_thread(sell_out)
    await asyncio.sleep(3)
    done.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    return len(ready), [t - started for t in heard_at]
