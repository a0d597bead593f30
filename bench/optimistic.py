"""Optimistic (version column) or pessimistic (SELECT ... FOR UPDATE) seat holds, for an event.

    .venv/bin/python bench/optimistic.py --processes                  # 32 workers
    .venv/bin/python bench/optimistic.py --processes --workers 90 --scenarios hot-rows,one-seat

Issue 14: the Russian article holds seats optimistically: read the seats and their `version`
without a lock, then `UPDATE seat SET status=HELD, version=version+1 WHERE id=? AND
version=? AND status=AVAILABLE` per seat, all or nothing, and retry (or answer 409) when a
competitor changed a seat in between.  Seatkeeper's one hold path (`bookings.customer_holds.
hold_seats`) is pessimistic: it locks the seat rows FOR UPDATE in the one lock order
(docs/architecture.md) first.
Both end with the same conditional F() update of the inventory row (the category's counter).

The optimistic variant lives here only: `hold_seats_optimistic` below, on a `version` column
this bench adds to its scratch database's `bookings_seat` (never a migration of the product).
It reuses the engine's pieces (the per-customer cap, `create_held_booking`, the inventory
reservation); only the seat locking differs.  A lost compare-and-set rolls the attempt back
and re-reads: seats taken by then mean 409 (SeatUnavailable); seats available again (changed
and given back in between) are retried, up to `--retries` times, then 409 as well.

Venue: 4 sections x 20 rows x 25 seats = 2,000 seats, one price category per section (A-D).
Scenarios (a fresh event on the same venue for each, both variants run each scenario):
  spread     LOW contention: every worker holds its own pairs of seats (disjoint, spread over
             the whole venue) until it has none left; 1,920 seats sold
  hot-rows   HIGH contention: every worker holds random adjacent pairs in the same 2 front
             rows of one section (50 seats) until it loses 40 times in a row
  one-seat   HIGH contention: every worker fights for one seat (exactly 1 winner)
Prints holds/s, attempts/s, p50/p99 of all attempts and of the winners, retries (optimistic),
lost compare-and-sets, errors, and an oversell audit (bookings.audit.check_inventory, seats
HELD = units held, every HELD seat taken exactly once).  Scratch database:
BENCH_DATABASE_URL, default `seatkeeper_bench_optimistic` on 127.0.0.1 (bench/holds.py's
helpers).  Redis hold filters off: PostgreSQL alone decides, for both variants.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_optimistic"
)
# One worker holds many pairs (spread): the per-customer cap is not what is measured.
os.environ.setdefault("MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE", "100000")

from bench.holds import configure_filters, ensure_database, run

VENUE = "\n".join(["stage: top"] + [f"Section S{n}: rows 1-20 x seats 1-25" for n in range(1, 5)])
CATEGORIES = "ABCD"
VERSION_COLUMN = (
    "ALTER TABLE bookings_seat ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 0"
)

# Per worker (keyed by its index, so threads do not double count): compare-and-sets lost,
# and retries after one.
TALLIES: dict[int, Counter] = {}


def hold_seats_optimistic(
    *,
    customer,
    sale_id: int,
    fare_class: str,
    seat_numbers: Sequence[str],
    max_retries: int = 3,
    tally: Counter | None = None,
):
    """The article's hold: unlocked read of the seats with their version, then one
    compare-and-set per seat (in seat order), all or nothing; the rest as the engine does it."""
    from django.db import connection, transaction
    from django.db.models import OuterRef, Subquery
    from django.utils import timezone

    from bookings import catalogue, customer_holds, holding, passengers
    from bookings.errors import SeatNotFound, SeatUnavailable, SeatWrongCabin, SoldOut
    from bookings.live import announce_seats_on_commit
    from bookings.models import Inventory, Seat, SeatStatus

    tally = tally if tally is not None else Counter()
    seat_nos = sorted(customer_holds.normalise_seat_numbers(seat_numbers))
    names = passengers.clean_passenger_names(None, len(seat_nos))
    fare = Inventory.objects.filter(sale_id=OuterRef("sale_id"), fare_class=fare_class)
    for attempt in range(max_retries + 1):
        now = timezone.now()
        # hold_seats' one read, without FOR UPDATE and with each seat's version
        seats = list(
            Seat.objects.select_related("sale", *catalogue.owner_paths("sale__"))
            .filter(sale_id=sale_id, seat_no__in=seat_nos)
            .annotate(
                fare_price=Subquery(fare.values("price")[:1]),
                fare_currency=Subquery(fare.values("currency")[:1]),
            )
            .extra(select={"version": "bookings_seat.version"})
            .order_by("seat_no")
        )
        if len(seats) != len(seat_nos):
            raise SeatNotFound(set(seat_nos) - {s.seat_no for s in seats})
        holding.check_sale_open(seats[0].sale, now)
        wrong = [s.seat_no for s in seats if s.fare_class != fare_class]
        if wrong:
            raise SeatWrongCabin(wrong, fare_class)
        taken = [s.seat_no for s in seats if s.status != SeatStatus.AVAILABLE]
        if taken:
            raise SeatUnavailable(taken)
        if attempt:
            tally["retries"] += 1
        with transaction.atomic():
            holding.check_hold_cap(customer=customer, sale_id=sale_id, units=len(seats), now=now)
            won = True
            with connection.cursor() as cursor:
                for seat in seats:  # the one seat order: no cycle between two pairs
                    cursor.execute(
                        "UPDATE bookings_seat SET version = version + 1"
                        " WHERE id = %s AND version = %s AND status = %s",
                        [seat.pk, seat.version, SeatStatus.AVAILABLE],
                    )
                    if cursor.rowcount != 1:
                        won = False
                        break
            if won:
                booking = holding.create_held_booking(
                    customer_id=customer.pk,
                    sale_id=sale_id,
                    fare_class=fare_class,
                    units=len(seats),
                    seats=seats,
                    names=names,
                    amount=seats[0].fare_price * len(seats) + sum(s.surcharge for s in seats),
                    currency=seats[0].fare_currency,
                    expires_at=now + holding.hold_ttl(),
                    now=now,
                )
                if not holding.reserve_units(
                    sale_id=sale_id, fare_class=fare_class, units=len(seats)
                ):
                    raise SoldOut(fare_class)
                announce_seats_on_commit(sale_id=sale_id, seats=seat_nos, status=SeatStatus.HELD)
                return booking
            tally["lost_cas"] += 1
            transaction.set_rollback(True)
    raise SeatUnavailable(seat_nos)


def setup_venue():
    import time

    from tests.events.factories import VenueFactory

    return VenueFactory(name=f"Bench hall {time.time_ns()}", plan=VENUE)


def new_event(venue):
    from decimal import Decimal

    from events.services import AssignmentSpec, PriceCategorySpec
    from tests.events.factories import EventFactory

    prices = [
        PriceCategorySpec(code=c, name=f"Category {c}", price=Decimal(90 - 10 * n))
        for n, c in enumerate(CATEGORIES)
    ]
    assignments = [AssignmentSpec(c, f"S{n + 1}") for n, c in enumerate(CATEGORIES)]
    return EventFactory(venue=venue, prices=prices, assignments=assignments)


def audit(sale_id: int) -> str:
    """'' when clean: counters match the bookings, seats HELD = units held, no seat twice."""
    from django.db import connection
    from django.db.models import Sum

    from bookings.audit import check_inventory
    from bookings.models import Booking, BookingStatus, Inventory, Seat, SeatStatus

    problems = check_inventory(sale_id=sale_id)
    held_units = Inventory.objects.filter(sale_id=sale_id).aggregate(n=Sum("held"))["n"]
    held_seats = Seat.objects.filter(sale_id=sale_id, status=SeatStatus.HELD).count()
    booked = (
        Booking.objects.filter(sale_id=sale_id, status=BookingStatus.HELD).aggregate(
            n=Sum("seat_count")
        )["n"]
        or 0
    )
    if not held_units == held_seats == booked:
        problems.append(f"units held {held_units}, seats HELD {held_seats}, booked {booked}")
    over = Inventory.objects.filter(sale_id=sale_id).extra(
        where=["held + sold > capacity + overbook_limit"]
    )
    problems += [f"{inv.fare_class} oversold" for inv in over]
    with connection.cursor() as cursor:  # optimistic runs: each HELD seat changed exactly once
        cursor.execute(
            "SELECT count(*) FROM bookings_seat WHERE sale_id = %s AND version > 1", [sale_id]
        )
        (twice,) = cursor.fetchone()
    if twice:
        problems.append(f"{twice} seats taken more than once")
    return "; ".join(problems)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--processes", action="store_true", help="fork a process per worker")
    parser.add_argument("--scenarios", default="spread,hot-rows,one-seat")
    parser.add_argument("--variants", default="pessimistic,optimistic")
    parser.add_argument("--retries", type=int, default=3, help="optimistic: retries per hold")
    parser.add_argument(
        "--rounds", type=int, default=1, help="run each scenario N times, variant order flipped"
    )
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()

    ensure_database()
    configure_filters("off")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, connections

    from bookings import availability
    from bookings.customer_holds import hold_seats
    from kernel.locking import lock_errors_as_too_busy
    from kernel.metrics import counts_holds

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(VERSION_COLUMN)
    users = [
        get_user_model().objects.get_or_create(username=f"optim{i}")[0] for i in range(args.workers)
    ]
    venue = setup_venue()

    kind = "processes" if args.processes else "threads"
    print(
        f"Event seat holds, optimistic (version column) vs pessimistic (FOR UPDATE): "
        f"{args.workers} {kind}, a 2,000-seat venue (4 sections x 20 rows x 25, categories "
        f"A-D), a fresh event per run, Redis filters off, optimistic retries {args.retries}"
    )
    print(
        f"{'scenario':<10}{'variant':<13}{'holds':>6}{'attempts':>9}{'holds/s':>9}"
        f"{'att/s':>7}{'p50':>7}{'p99':>7}{'win p50':>8}{'win p99':>8}"
        f"{'retries':>8}{'lostCAS':>8}  audit  errors   (ms)"
    )
    variants = args.variants.split(",")
    runs = [
        (scenario, variant)
        for scenario in args.scenarios.split(",")
        for n in range(args.rounds)
        for variant in (variants if n % 2 == 0 else variants[::-1])
    ]
    for scenario, variant in runs:
        event = new_event(venue)
        sale_id = event.sale_id
        TALLIES.clear()

        def hold(i, category, seat_nos, sale_id=sale_id, variant=variant):
            if variant == "pessimistic":
                return hold_seats(
                    customer=users[i],
                    sale_id=sale_id,
                    fare_class=category,
                    seat_numbers=seat_nos,
                )
            # What hold_seats has around its transaction, so only the seat locking differs.
            with availability.hold_admission(
                sale_id=sale_id, fare_class=category, units=len(seat_nos), seat_nos=seat_nos
            ):
                return counts_holds(lock_errors_as_too_busy(hold_seats_optimistic))(
                    customer=users[i],
                    sale_id=sale_id,
                    fare_class=category,
                    seat_numbers=seat_nos,
                    max_retries=args.retries,
                    tally=TALLIES.setdefault(i, Counter()),
                )

        if scenario == "spread":
            pairs = [
                (c, [f"{s}-{row}-{n}", f"{s}-{row}-{n + 1}"])
                for s, c in enumerate(CATEGORIES, start=1)
                for row in range(1, 21)
                for n in range(1, 25, 2)
            ]
            random.Random(args.seed).shuffle(pairs)
            mine = {i: pairs[i :: args.workers] for i in range(args.workers)}

            def attempt(i, rng, mine=mine, hold=hold):
                if not mine[i]:
                    raise StopIteration
                category, seat_nos = mine[i].pop()
                hold(i, category, seat_nos)

            stop = 10**9
        elif scenario == "hot-rows":
            hot = [[f"1-{r}-{n}", f"1-{r}-{n + 1}"] for r in (1, 2) for n in range(1, 25)]

            def attempt(i, rng, hot=hot, hold=hold):
                hold(i, "A", rng.choice(hot))

            stop = 40
        elif scenario == "one-seat":

            def attempt(i, rng, hold=hold):
                hold(i, "A", ["1-1-1"])

            stop = 20
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        result = run(
            f"{scenario}/{variant}",
            args.workers,
            attempt,
            stop_after_failures=stop,
            processes=args.processes,
            counters=lambda i: dict(TALLIES.get(i, {})),
        )
        problems = audit(sale_id)
        if scenario == "one-seat" and result["holds"] != 1:
            problems += f" {result['holds']} winners of one seat"
        if scenario == "spread" and result["holds"] != 960:
            problems += f" {result['holds']} of 960 disjoint pairs held"
        counters = result["counters"]
        print(
            f"{scenario:<10}{variant:<13}{result['holds']:>6}{result['attempts']:>9}"
            f"{result['holds_per_s']:>9.0f}{result['attempts_per_s']:>7.0f}"
            f"{result['p50_ms']:>7.1f}{result['p99_ms']:>7.1f}"
            f"{result['won_p50_ms']:>8.1f}{result['won_p99_ms']:>8.1f}"
            f"{counters.get('retries', 0):>8}{counters.get('lost_cas', 0):>8}"
            f"  {'clean' if not problems else 'FAIL: ' + problems}  {result['errors']}",
            flush=True,
        )
        if problems:
            raise SystemExit(f"audit failed: {problems}")
    connections.close_all()


if __name__ == "__main__":
    main()
