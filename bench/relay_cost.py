"""What the outbox relay costs per event in one process: CPU ms (`time.thread_time`) and
PostgreSQL statements, on the confirmed bookings bench/request_cost.py's pay scenario leaves
unrelayed (it runs no worker).

    .venv/bin/python bench/request_cost.py --scenarios pay      # leaves ~165 events
    .venv/bin/python bench/relay_cost.py                        # this checkout's relay
    (cd /tmp/base && /work/main/.venv/bin/python /work/main/bench/relay_cost.py)  # another's

Each run relays a fresh copy (CREATE DATABASE ... TEMPLATE) of request_cost's database, so
runs of two checkouts (same schema) relay the same events.  The worker's relay is not in the
web's figures, and a confirmed booking's relay (tickets, the e-mail's row, the waiting room's
sell-out check, partners' deliveries) costs more CPU than its pay request does.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

SOURCE = "seatkeeper_bench_cost"  # bench/request_cost.py's DEFAULT_DB


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-db", default=SOURCE)
    parser.add_argument("--copy-db", default="seatkeeper_bench_relay")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--batch-size", type=int, default=50)
    args = parser.parse_args()
    psql = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc"]
    subprocess.run([*psql, f"DROP DATABASE IF EXISTS {args.copy_db}"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {args.copy_db} TEMPLATE {args.source_db}"], check=True)
    sys.path.insert(0, str(Path.cwd()))  # the checkout run from: its code relays
    os.environ["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:5432/{args.copy_db}"
    os.environ["REDIS_URL"] = args.redis_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    logging.disable(logging.CRITICAL)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from kernel.models import OutboxEvent
    from kernel.outbox import relay_outbox

    waiting = OutboxEvent.objects.filter(published_at__isnull=True).count()
    if not waiting:
        raise SystemExit(f"no unrelayed events in {args.source_db}: run request_cost.py first")

    def relay_all() -> tuple[int, float]:
        started, published = time.thread_time(), 0
        while True:
            report = relay_outbox(batch_size=args.batch_size)
            published += report.published
            if not report.claimed:
                return published, time.thread_time() - started

    # Statements counted on one copy, CPU timed on another (the count's wrapper costs CPU).
    with CaptureQueriesContext(connection) as queries:
        counted, _ = relay_all()
    connection.close()
    subprocess.run([*psql, f"DROP DATABASE {args.copy_db}"], check=True)
    subprocess.run([*psql, f"CREATE DATABASE {args.copy_db} TEMPLATE {args.source_db}"], check=True)
    published, cpu = relay_all()
    print(
        f"checkout {Path.cwd()}: {published} events relayed, cpu {cpu * 1000 / published:.2f} "
        f"ms/event, statements {len(queries.captured_queries) / counted:.1f}/event"
    )


if __name__ == "__main__":
    main()
