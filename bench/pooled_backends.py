"""PostgreSQL backends and holds, direct and through PgBouncer (issue 27 item 1's measurement).

    flock /work/wt/bench.lock .venv/bin/python bench/pooled_backends.py [--clients 64]
        [--seconds 20] [--save bench/results/pooled_backends.json]

The production shape's web tier, local: a throw-away PostgreSQL and Redis, 4 web processes
(uvicorn `--workers 4`, WSGI on `WEB_THREADS=8` threads each: 32 request threads), a Celery
worker (2 processes) and beat; once straight to PostgreSQL, once through a private PgBouncer
in transaction mode (Debian's, pool 20, as `./scripts/test` starts it, `DB_PGBOUNCER=true`).
`--clients` API clients hold one seatless unit after another (each with its Idempotency-Key)
on flights of their own for `--seconds`; meanwhile `pg_stat_activity` is sampled every 20 ms.
Printed per mode: the peak of backends on the database, holds, holds/s, p50 and p99."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.flash_sale import django_setup, new_customers, new_flight
from bench.stack import (
    ROOT,
    ThrowawayPostgres,
    ThrowawayRedis,
    app_env,
    free_port,
    manage,
    start_beat,
    start_web,
    start_worker,
    stop,
)

WEB_PROCESSES, WEB_THREADS, POOL = 4, 8, 20


def backends(direct_url: str, database: str) -> int:
    import psycopg

    with psycopg.connect(direct_url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [database],
        ).fetchone()[0]


async def holds(base: str, sales: list[int], tokens: list[str], seconds: float) -> dict[str, Any]:
    import aiohttp

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    deadline = time.perf_counter() + seconds
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=60)
    ) as session:

        async def client(index: int, token: str) -> None:
            body = {
                "flightId": sales[index % len(sales)],
                "fareClass": "ECONOMY",
                "passengers": 1,
                "passengerNames": [f"Buyer {index}"],
            }
            while time.perf_counter() < deadline:
                headers = {"Authorization": f"Token {token}", "Idempotency-Key": str(uuid.uuid4())}
                began = time.perf_counter()
                async with session.post(f"{base}/api/bookings", json=body, headers=headers) as r:
                    await r.read()
                    statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.status == 201:
                    latencies.append(time.perf_counter() - began)
                elif r.status == 409:  # this flight is sold out: the client is done
                    return

        started = time.perf_counter()
        await asyncio.gather(*(client(i, t) for i, t in enumerate(tokens)))
        elapsed = time.perf_counter() - started
    latencies.sort()

    def quantile(q: float) -> float:
        return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1)

    return {
        "holds": len(latencies),
        "elapsed_s": round(elapsed, 1),
        "holds_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": quantile(0.50),
        "p99_ms": quantile(0.99),
        "statuses": statuses,
    }


def run_mode(mode: str, env: dict[str, str], direct: str, database: str, args, tmp: Path):
    sales = [new_flight(f"PB{mode[0].upper()}").sale_id for _ in range(max(1, args.clients // 8))]
    tokens = [token for _, token in new_customers(args.clients)]
    port = free_port()
    web_env = {**env, "WEB_THREADS": str(WEB_THREADS)}
    procs = [
        start_web(web_env, port, tmp / f"{mode}-web.log", workers=WEB_PROCESSES),
        start_worker(env, tmp / f"{mode}-worker.log"),
        start_beat(env, tmp / f"{mode}-beat.log"),
    ]
    peak, idle, done = [0], backends(direct, database), threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], backends(direct, database))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    try:
        time.sleep(3)  # every worker process up
        sampler.start()
        result = asyncio.run(holds(f"http://127.0.0.1:{port}", sales, tokens, args.seconds))
    finally:
        done.set()
        if sampler.is_alive():
            sampler.join()
        for process in procs:
            stop(process)
    return {"peak_backends": peak[0], "backends_before_stack": idle, **result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--save", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))
    import run_tests

    tmp = Path(tempfile.mkdtemp(prefix="pooled-backends-"))
    report: dict[str, Any] = {
        "web": f"{WEB_PROCESSES} processes x {WEB_THREADS} threads",
        "worker": "celery --concurrency 2, beat",
        "clients": args.clients,
        "seconds": args.seconds,
    }
    with ThrowawayPostgres(max_connections=300) as pg, ThrowawayRedis() as redis:
        env = app_env(pg.url, redis.url, DJANGO_DEBUG="false", DJANGO_ALLOWED_HOSTS="127.0.0.1")
        manage(env, "migrate", "--noinput")
        django_setup(pg.url, redis.url)
        database = pg.url.rsplit("/", 1)[1]
        report["direct"] = run_mode("direct", env, pg.url, database, args, tmp)
        print(json.dumps(report["direct"]), flush=True)
        binary = run_tests.pgbouncer_binary()
        with run_tests.private_pgbouncer(binary, pg.url, pool_size=POOL) as pooler:
            pooled = {**env, "DATABASE_URL": pooler, "DB_PGBOUNCER": "true"}
            report["pgbouncer"] = {
                "pool": POOL,
                **run_mode("pooled", pooled, pg.url, database, args, tmp),
            }
    print(json.dumps(report, indent=2))
    if args.save:
        args.save.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
