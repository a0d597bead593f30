"""Under pytest-xdist, each worker gets a Redis database of its own.

Loaded with `-p tests.xdist_redis` (pyproject's addopts), so it runs before pytest-django reads
Django's settings.  PostgreSQL needs nothing: pytest-django already gives worker `gw0` the test
database `test_seatkeeper_gw0`.  Redis holds what is keyed by row ids (waiting-room queues,
seat gates, channel groups per flight, throttles) and the Celery queue, and ids restart in each
worker's database: two workers on one Redis database would read each other's queues, and a
Celery worker started by one would run the other's messages against the wrong database.  So
worker `gwN` uses database N + 1 of the same server (0 stays the serial run's), and so does
every subprocess it starts (uvicorn, Celery, beat), since they inherit the environment.

Only ./scripts/test's own throw-away Redis is split this way by default (see
scripts/run_tests.py); the variables rewritten are the ones that name the server.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

REDIS_VARIABLES = ("REDIS_URL", "CELERY_BROKER_URL")


def redis_url_for_worker(url: str, worker: str) -> str:
    """`redis://host:port/0` for worker `gw1` -> `redis://host:port/2`."""
    index = int(worker.removeprefix("gw"))
    if index + 1 > 15:
        raise RuntimeError(f"xdist worker {worker}: Redis has databases 0-15 only")
    return urlsplit(url)._replace(path=f"/{index + 1}").geturl()


def _isolate() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    for name in REDIS_VARIABLES:
        if os.environ.get(name, "").startswith("redis://"):
            os.environ[name] = redis_url_for_worker(os.environ[name], worker)


_isolate()
