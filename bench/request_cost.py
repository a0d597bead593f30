"""What one request costs in this process: CPU ms, PostgreSQL statements and Redis calls.

    .venv/bin/python bench/request_cost.py                    # this checkout
    .venv/bin/python bench/request_cost.py --checkout /tmp/base --save before.json
    .venv/bin/python bench/request_cost.py --baseline before.json
    .venv/bin/python bench/request_cost.py --shape pooled-cluster  # PgBouncer + Redis Cluster

The flash-sale bench (bench/flash_sale.py) measures the stack as users meet it; its CPU ms per
request moves with whatever else the machine runs (two cores shared with PostgreSQL, the load
generator and other work).  This one calls the WSGI application in one thread of one process,
with no HTTP server and no contention, and counts only that thread's CPU time
(`time.thread_time`), so two checkouts can be compared on a busy machine: it is the cost of
the code per request, middleware, DRF, the ORM and the hold itself, without the server's.

Scenarios (each on a fresh demo flight of the scratch database, Redis filters on):
  hold      POST /api/bookings, one seatless unit, each by its own customer, until sold out
  loser     the same request on the sold-out flight (the Redis counter's fast 409)
  seat-map  GET /api/flights/{id}/seats, warm (cached bytes), and 304 with If-None-Match
  search    GET /api/flights?from=&to=&date=, warm (cached bytes), and 304 with If-None-Match
  pay       POST /api/bookings/{id}/payments with the sandbox's approved card, on seatless holds
            made (unmeasured) just before: what scenario (c) of bench/flash_sale.py pays per
            order on top of its hold
  webhook   POST /api/payments/webhook of each paid booking's sandbox event, signed as the
            sandbox's Celery task sends it (the third web request of each (c) order)
`--scenarios pay` runs only that one (default: all); `--profile PATH` runs them once to warm
up, then profiles each one's measured requests, one file per measured figure (PATH.pay.txt
and PATH.pay.prof, PATH.webhook.txt...).
Prints, per scenario: requests, CPU ms per request (median of 5 rounds), PostgreSQL
statements and round trips (with BEGIN and COMMIT) per request, Redis commands per request,
Redis round trips per request (writes to a Redis socket: a pipeline is one per node it
touches, a command one) and Celery messages published per request.  No worker runs: a relay
kick stays pending (kernel.kicks) until its flag's TTL ends, the case of a relay that lags
behind the commits.

`--shape pooled-cluster` runs the same scenarios in the production shape of issue 27: the
database through a throw-away PgBouncer in transaction mode (scripts/run_tests.py's, as the
tests run it) in front of `--database-url`'s server, and the hold filters, the waiting room
and the cache on a throw-away Redis Cluster of 3 primaries with a replica each
(tests/redis_cluster.py), named in REDIS_CLUSTER_URL as in production.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.flash_sale import (  # noqa: E402
    DEFAULT_REDIS_DB,
    django_setup,
    new_customers,
    new_flight,
    recreate_database,
)
from bench.request_counters import Counters  # noqa: E402

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/seatkeeper_bench_cost"


def _client():
    from django.test import Client

    return Client(HTTP_HOST="127.0.0.1")


# Set by --profile: each measured loop of the scenario being profiled writes a CPU-time
# profile to PROFILE_TO.<figure>.txt (set-up and warm-up calls are not in it).
PROFILE_TO: Path | None = None


def _write_profile(profiler, path: Path) -> None:
    import io
    import pstats

    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("cumulative").print_stats(70)
    stats.sort_stats("tottime").print_stats(40)
    path.write_text(out.getvalue())
    profiler.dump_stats(path.with_suffix(".prof"))  # for pstats' callers and callees


def _measure(calls, *, rounds: int = 5, figure: str = "") -> dict:
    """Run the list of zero-argument calls split in `rounds` parts; CPU ms per call by part."""
    per_round = []
    counters = Counters()
    size = max(1, len(calls) // rounds)
    statuses: dict[int, int] = {}
    profiler = None
    if PROFILE_TO is not None:
        # CPU time, not wall time: a wall-clock profile of this loop is mostly waiting on
        # PostgreSQL and Redis and hides the Python (docs/performance.md, issue 26).
        import cProfile

        profiler = cProfile.Profile(time.thread_time)
    with counters.counting(), profiler or contextlib.nullcontext():
        for start in range(0, size * rounds, size):
            part = calls[start : start + size]
            t0 = time.thread_time()
            for call in part:
                status = call()
                statuses[status] = statuses.get(status, 0) + 1
            per_round.append((time.thread_time() - t0) * 1000 / len(part))
    if profiler is not None:
        _write_profile(profiler, Path(f"{PROFILE_TO}.{figure or 'requests'}.txt"))
    n = size * rounds
    return {
        "requests": n,
        "cpu_ms": statistics.median(per_round),
        "cpu_ms_rounds": [round(x, 3) for x in per_round],
        "sql_per_request": counters.sql / n,
        "pg_round_trips_per_request": counters.pg_round_trips / n,
        "redis_per_request": counters.redis / n,
        "redis_round_trips_per_request": counters.round_trips / n,
        "celery_publishes_per_request": counters.publishes / n,
        "statuses": statuses,
    }


def _post_hold(client, *, flight_id: int, token: str, index: int):
    """One customer's (`token`) hold of one seatless economy unit for "Buyer `index`"."""
    return client.post(
        "/api/bookings",
        data=json.dumps(
            {
                "flightId": flight_id,
                "fareClass": "ECONOMY",
                "passengers": 1,
                "passengerNames": [f"Buyer {index}"],
            }
        ),
        content_type="application/json",
        secure=True,
        HTTP_AUTHORIZATION=f"Token {token}",
    )


def scenario_holds() -> tuple[dict, dict]:
    flight = new_flight("RC")
    customers = new_customers(200)
    client = _client()

    def hold(token: str, index: int):
        def call() -> int:
            return _post_hold(client, flight_id=flight.pk, token=token, index=index).status_code

        return call

    winners = [hold(token, i) for i, (_, token) in enumerate(customers[:170])]
    holds = _measure(winners, figure="hold")
    losers = [hold(token, i) for i, (_, token) in enumerate(customers[170:] * 10)]
    return holds, _measure(losers, figure="loser")


def scenario_pay() -> tuple[dict, dict]:
    """Hold (not measured), then pay with the sandbox's approved card (measured), as (c) does
    per order; then each payment's webhook, as the sandbox's delivery task sends it.  Only
    the HTTP API and the sandbox's ledger are used, so a before checkout runs it too."""
    import uuid

    from django.conf import settings

    from payments.gateways.sandbox import SIGNATURE_HEADER, signature_header
    from payments.models import SandboxEvent

    flight = new_flight("RP")
    customers = new_customers(170)  # economy is 170 units
    client = _client()
    booking_ids = []
    for index, (_, token) in enumerate(customers):
        answer = _post_hold(client, flight_id=flight.pk, token=token, index=index)
        assert answer.status_code == 201, answer.content
        booking_ids.append(answer.json()["bookingId"])

    def pay(token: str, booking_id: int):
        def call() -> int:
            answer = client.post(
                f"/api/bookings/{booking_id}/payments",
                data=json.dumps({"paymentMethod": "4242424242424242"}),
                content_type="application/json",
                secure=True,
                HTTP_AUTHORIZATION=f"Token {token}",
                HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
            )
            assert answer.json().get("bookingStatus") == "CONFIRMED", answer.content
            return answer.status_code

        return call

    calls = [pay(token, b) for (_, token), b in zip(customers, booking_ids, strict=True)]
    for call in calls[:5]:  # warm-up: first imports and caches are not the request's cost
        call()
    pays = _measure(calls[5:], figure="pay")
    secret = settings.PAYMENTS_SANDBOX["WEBHOOK_SECRET"]
    events = SandboxEvent.objects.filter(charge__merchant_reference__isnull=False).order_by("pk")

    def deliver(payload: dict):
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()

        def call() -> int:
            return client.post(
                "/api/payments/webhook",
                data=body,
                content_type="application/json",
                secure=True,
                headers={SIGNATURE_HEADER: signature_header(body=body, secret=secret)},
            ).status_code

        return call

    deliveries = [deliver(e.payload) for e in events]
    for call in deliveries[:5]:
        call()
    return pays, _measure(deliveries[5:], figure="webhook")


def _warm_and_304(url: str, name: str) -> tuple[dict, dict]:
    """`url` read 500 times cached (after a first read that caches it), then 500 times with
    If-None-Match carrying its ETag."""
    client = _client()
    etag = client.get(url, secure=True).headers.get("ETag", "")

    def warm() -> int:
        return client.get(url, secure=True).status_code

    def not_modified() -> int:
        return client.get(url, secure=True, HTTP_IF_NONE_MATCH=etag).status_code

    return (
        _measure([warm] * 500, figure=f"{name}-warm"),
        _measure([not_modified] * 500, figure=f"{name}-304"),
    )


def scenario_seat_map() -> tuple[dict, dict]:
    return _warm_and_304(f"/api/flights/{new_flight('RM').pk}/seats", "seat-map")


def scenario_search() -> tuple[dict, dict]:
    """GET /api/flights?from=FRA&to=BER&date=<the day of a fresh flight>."""
    from datetime import timedelta

    flight = new_flight("RS")
    day = (flight.departure_at + timedelta(hours=1)).date().isoformat()  # FRA is UTC+1 or +2
    return _warm_and_304(f"/api/flights?from=FRA&to=BER&date={day}", "search")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{DEFAULT_REDIS_DB + 1}")
    parser.add_argument("--shape", choices=("direct", "pooled-cluster"), default="direct")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--baseline", type=Path)
    parser.add_argument(
        "--scenarios",
        default="hold,seat-map,search,pay",
        help="comma-separated: hold (with loser), seat-map, search, pay (with webhook)",
    )
    parser.add_argument(
        "--gc",
        choices=("served", "python"),
        default="served",
        help="the cyclic collector as the checkout's served process runs it (its "
        "config.warmup.freeze_startup_heap, when it has one), or Python's defaults",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        help="CPU-time profiles (cProfile on thread_time) of every scenario's measured "
        "requests, after a warm-up round of them all",
    )
    args = parser.parse_args()
    unknown = set(scenario_names(args.scenarios)) - set(SCENARIOS)
    if unknown:
        parser.error(
            f"--scenarios: no scenario {', '.join(sorted(unknown))} "
            f"(there are {', '.join(SCENARIOS)}; the loser comes with hold)"
        )
    with contextlib.ExitStack() as stack:
        run(args, stack)


# Each scenario: what runs it, and the names of the figures it returns.
SCENARIOS = {
    "hold": (scenario_holds, ("hold", "loser")),
    "seat-map": (scenario_seat_map, ("seat-map warm", "seat-map 304")),
    "search": (scenario_search, ("search warm", "search 304")),
    "pay": (scenario_pay, ("pay", "webhook")),
}


def scenario_names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _profiled(scenario, path: Path):
    """`scenario()` with each of its measured loops profiled (`_measure`)."""
    global PROFILE_TO
    PROFILE_TO = path
    try:
        return scenario()
    finally:
        PROFILE_TO = None


def _collector_as_served() -> str:
    """Python's cyclic collector set as the checkout's served process sets it, once the
    application is loaded.  Since h-server a web process freezes its startup heap and
    collects after 7,000 new objects (config.warmup.freeze_startup_heap; docs/performance.md,
    "the server's share"); a checkout without that keeps Python's defaults, as its served
    process did, so the figure here is the served process's less the server's.  `--gc
    python` keeps Python's defaults for every checkout (docs/performance.md, "the session of
    7 Dec, 07:33 UTC on": within the noise either way).  Returns the policy, for the report."""
    import gc

    try:
        from config.warmup import freeze_startup_heap
    except ImportError:
        return "Python's defaults (the checkout's served process sets none)"
    freeze_startup_heap()
    if not gc.get_freeze_count():  # WEB_GC_FREEZE=0
        return "Python's defaults (WEB_GC_FREEZE=0)"
    return f"as served: startup heap frozen, gen0 threshold {gc.get_threshold()[0]}"


def _production_shape(args, stack: contextlib.ExitStack) -> str:
    """Start PgBouncer and a Redis Cluster for this run; the database URL to use."""
    import os
    import tempfile

    sys.path.insert(0, str(ROOT / "scripts"))
    from run_tests import pgbouncer_binary, private_pgbouncer

    from tests.redis_cluster import ThrowAwayCluster

    pooler = stack.enter_context(private_pgbouncer(pgbouncer_binary(), args.database_url))
    cluster = ThrowAwayCluster(Path(tempfile.mkdtemp(prefix="request-cost-cluster-")))
    stack.callback(cluster.stop)
    cluster.start()
    os.environ["REDIS_CLUSTER_URL"] = cluster.url
    os.environ["DB_PGBOUNCER"] = "true"
    print(f"shape: PgBouncer {pooler}, Redis Cluster {cluster.url}", flush=True)
    return pooler


def run(args, stack: contextlib.ExitStack) -> None:
    recreate_database(args.database_url)
    database_url = args.database_url
    if args.shape == "pooled-cluster":
        database_url = _production_shape(args, stack)
    django_setup(database_url, args.redis_url, args.checkout.resolve())
    import redis
    from django.core.cache import cache
    from django.core.management import call_command

    redis.Redis.from_url(args.redis_url).flushdb()
    cache.clear()  # the cluster's, when on one (the plain Redis is flushed above)
    with contextlib.redirect_stdout(None):
        call_command("migrate", verbosity=0)
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]
    settings.DEBUG = False
    # Warm means cached for the whole measurement: no rebuild when the short TTLs pass
    # (which would count a render every few seconds, more of them the slower the machine).
    settings.API_CACHE = {
        **settings.API_CACHE,
        "SEAT_MAP_SECONDS": 3600,
        "FLIGHT_SEARCH_SECONDS": 3600,
    }

    gc_policy = _collector_as_served() if args.gc == "served" else "Python's defaults"
    chosen = scenario_names(args.scenarios)
    if args.profile:
        # A warm-up round first: first-request imports and per-connection compilations are
        # not profiled.
        for name in chosen:
            SCENARIOS[name][0]()
    figures = {}
    for name in chosen:
        scenario, names = SCENARIOS[name]
        if args.profile:
            figures.update(zip(names, _profiled(scenario, args.profile), strict=True))
        else:
            figures.update(zip(names, scenario(), strict=True))
    baseline = json.loads(args.baseline.read_text()) if args.baseline else {}
    print(f"checkout: {args.checkout.resolve()}  shape: {args.shape}  collector: {gc_policy}")
    for name, f in figures.items():
        line = (
            f"  {name:14} {f['requests']:4} requests  cpu {f['cpu_ms']:6.2f} ms/request"
            f"  (rounds {f['cpu_ms_rounds']})  sql {f['sql_per_request']:.1f}"
            f"  pg round trips {f.get('pg_round_trips_per_request', 0):.1f}"
            f"  redis {f['redis_per_request']:.1f}"
            f"  round trips {f.get('redis_round_trips_per_request', 0):.1f}"
            f"  publishes {f.get('celery_publishes_per_request', 0):.2f}"
            f"  statuses {f['statuses']}"
        )
        if name in baseline:
            line += f"  | after/before cpu {f['cpu_ms'] / baseline[name]['cpu_ms']:.2f}"
        print(line)
    if args.save:
        args.save.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
