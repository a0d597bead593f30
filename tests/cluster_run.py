"""Every test on a Redis Cluster: the nightly run (SEATKEEPER_NIGHTLY=1) and
`./scripts/test --on-cluster` (SEATKEEPER_CLUSTER_TESTS=all).

Loaded with `-p tests.cluster_run` (pyproject's addopts), after `tests.xdist_redis` and before
pytest-django reads Django's settings.  In that mode each test process (each xdist worker, as
each has its own Redis database) starts its own throw-away cluster (tests/redis_cluster.py:
3 primaries, 1 replica each) and sets REDIS_CLUSTER_URL in the environment, so
config/settings (engine.py, caches_and_channels.py) puts the hold filters, the waiting room
and the cache on it exactly as in production, and every uvicorn, Celery and beat subprocess
the tests start inherits it.
Celery's broker and the channel layer stay on REDIS_URL, as in production.  Otherwise this
module does nothing; the default suite runs only the `redis_backend` tests on a cluster.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

CLUSTER_VARIABLE = "SEATKEEPER_CLUSTER_TESTS"

# The cluster this process started for the whole run (None when not in that mode).
WHOLE_RUN_CLUSTER = None


def every_test_on_the_cluster() -> bool:
    return os.environ.get(CLUSTER_VARIABLE) == "all" or os.environ.get("SEATKEEPER_NIGHTLY") == "1"


def _xdist_controller(argv: list[str]) -> bool:
    """The process that only hands tests to xdist workers (it runs none itself)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return False
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg in ("-n", "--numprocesses") and i + 1 < len(argv) else None
        if arg.startswith(("-n", "--numprocesses=")) and value is None:
            value = arg.removeprefix("--numprocesses=").removeprefix("-n")
        if value and value not in ("0",):
            return True
    return False


def _start() -> None:
    global WHOLE_RUN_CLUSTER
    if not every_test_on_the_cluster() or not os.environ.get("REDIS_URL"):
        return
    if _xdist_controller(sys.argv):
        return
    from tests.redis_cluster import ThrowAwayCluster

    workdir = Path(tempfile.mkdtemp(prefix="seatkeeper-cluster-run-"))
    cluster = ThrowAwayCluster(workdir)

    def stop() -> None:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    atexit.register(stop)
    cluster.start()
    os.environ["REDIS_CLUSTER_URL"] = cluster.url
    WHOLE_RUN_CLUSTER = cluster


_start()
