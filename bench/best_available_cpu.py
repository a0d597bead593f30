"""CPU of best available in one process, no profiler (issue 29, scenario (f)'s web cost):
on a fresh event of bench/best_available_sale.py's shape (100 rows x 24 seats, aisles after 7
and 17), 40 holds of 2, then the ranking to its first block alone, 20 times.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/seatkeeper_bench_<branch> \\
    REDIS_URL=redis://127.0.0.1:6379/<db> .venv/bin/python bench/best_available_cpu.py

Run from the checkout to measure (its directory comes first on the path), on a scratch
database: it migrates it and writes an event and 41 customers."""

from __future__ import annotations

import os
import sys
import time
import uuid


def main() -> None:
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from bench.best_available_sale import new_event
    from bookings.best_available import hold_best_available, ranked_blocks

    call_command("migrate", verbosity=0)
    event, _rows = new_event(blocks_asked=400)
    users = [
        get_user_model().objects.create(username=f"cpu{uuid.uuid4().hex[:10]}") for _ in range(41)
    ]

    def hold(user) -> None:
        hold_best_available(customer=user, sale_id=event.sale_id, fare_class="A", quantity=2)

    hold(users[0])  # warm
    started = time.process_time()
    for user in users[1:]:
        hold(user)
    per_hold = (time.process_time() - started) * 1000 / 40
    started = time.process_time()
    for _ in range(20):
        first = ranked_blocks(
            sale_id=event.sale_id, fare_class="A", quantity=2, may_strand=False, now=timezone.now()
        )
        next(iter(first))
    per_ranking = (time.process_time() - started) * 1000 / 20
    print(
        f"{os.getcwd()}: hold_best_available {per_hold:.1f} ms CPU per hold (40 holds), "
        f"ranking to the first block {per_ranking:.1f} ms CPU (20 calls)"
    )


if __name__ == "__main__":
    main()
