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
* sold-out: bench/waiting_room_sold_out.py.
"""

from __future__ import annotations

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
