"""Python function calls per request, counted by cProfile: the figure a busy machine cannot move.

    .venv/bin/python bench/request_calls.py --checkout /tmp/speed-base
    .venv/bin/python bench/request_calls.py

`bench/request_cost.py`'s scenarios (winning holds, losers, warm seat map and search, their
304s, payments and their webhooks), each after a warm-up round of all of them (first-request
imports and per-connection compilations are not counted), under
`cProfile.Profile(time.thread_time)`.  Prints per
request: function calls (deterministic: the same code does the same calls, whatever else the
machine runs), ORM compilations (`SQLCompiler.as_sql` calls), PostgreSQL statements and
Redis calls.  Its CPU figures would be the profiler's, so it prints none: CPU ms come from
`request_cost.py`.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import bench.request_cost as rc  # noqa: E402
from bench.flash_sale import django_setup, recreate_database  # noqa: E402


def _counted(measure):
    def wrapper(calls, *, rounds: int = 5, figure: str = "") -> dict:
        profiler = cProfile.Profile(time.thread_time)
        profiler.enable()
        out = measure(calls, rounds=rounds, figure=figure)
        profiler.disable()
        stats = pstats.Stats(profiler).stats
        n = out["requests"]
        out["calls"] = sum(v[1] for v in stats.values()) / n
        out["as_sql"] = (
            sum(v[1] for k, v in stats.items() if k[2] == "as_sql" and "compiler.py" in k[0]) / n
        )
        return out

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--database-url", default=rc.DEFAULT_DB)
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{rc.DEFAULT_REDIS_DB + 1}")
    args = parser.parse_args()
    recreate_database(args.database_url)
    django_setup(args.database_url, args.redis_url, args.checkout.resolve())
    import logging

    import redis
    from django.conf import settings
    from django.core.management import call_command

    redis.Redis.from_url(args.redis_url).flushdb()
    with contextlib.redirect_stdout(None):
        call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    settings.DEBUG = False
    # Warm means cached for the whole measurement: no rebuild when the short TTLs pass
    # (which would count a render every few seconds, more of them the slower the machine).
    settings.API_CACHE = {
        **settings.API_CACHE,
        "SEAT_MAP_SECONDS": 3600,
        "FLIGHT_SEARCH_SECONDS": 3600,
    }
    logging.disable(logging.INFO)  # the request log line is not what is being counted
    rc.scenario_holds()
    rc.scenario_seat_map()
    rc.scenario_search()
    rc.scenario_pay()
    rc._measure = _counted(rc._measure)
    figures = dict(zip(["hold", "loser"], rc.scenario_holds(), strict=True))
    figures.update(zip(["seat-map warm", "seat-map 304"], rc.scenario_seat_map(), strict=True))
    figures.update(zip(["search warm", "search 304"], rc.scenario_search(), strict=True))
    figures.update(zip(["pay", "webhook"], rc.scenario_pay(), strict=True))
    print(f"checkout: {args.checkout.resolve()}")
    for name, f in figures.items():
        print(
            f"  {name:14} calls/request {f['calls']:8.0f}  as_sql/request {f['as_sql']:.2f}"
            f"  sql {f['sql_per_request']:.1f}  redis {f['redis_per_request']:.1f}"
            f"  statuses {f['statuses']}"
        )


if __name__ == "__main__":
    main()
