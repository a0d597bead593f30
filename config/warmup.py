"""A web process pays its one-time costs when it starts, not in its first customers' requests.

Measured in a fresh process (docs/performance.md, scenario (w)): the first hold took 76 ms
against 25 ms for the next ones.  53 ms of it was Django filling its URL reverse table, which
it does lazily, once per language, on the first `reverse()` (every 201 names its booking in
`Location`), and 20 ms importing and building the channel layer on the first seat-map
announcement.  At an on-sale the first holds of every web process arrive together, each
thread filled the table for itself under one GIL, and the first admitted shoppers' holds took
400-800 ms: the slowest of the whole sale.
"""

from __future__ import annotations

import gc
import logging
import os
import sys

from channels.layers import get_channel_layer
from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.urls import reverse
from django.utils import translation

from kernel import redis_own_connection

logger = logging.getLogger(__name__)


def warm_up() -> None:
    from storefront.hold_answer import warm_up_urls

    get_channel_layer()
    cache.get  # noqa: B018 - the cache backend (django-redis) is imported on first use
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            reverse("healthz")
    with translation.override(settings.LANGUAGE_CODE):
        warm_up_urls()


def open_connections_ahead() -> None:
    """Open the database and Redis connections the HTTP threads will use, before the first
    request: one per thread (WEB_WARM_CONNECTIONS, default WEB_THREADS, default 8; 0 turns
    it off).  Each HTTP thread opens its own database connection on its first request, and
    the Redis pools grow by one connection for each request more than ever ran at once; at
    the start of a sale all threads do that together, and the connects and the new server
    processes' cold first statements were the open loop's worst holds (docs/performance.md,
    "Issue 26: warm connections").  The database connections are warmed with the hold's and
    the token's statements (rolled back) and handed out by kernel/database_backend/ahead.py.
    A database or Redis that is down now costs nothing but the warmth."""
    count = int(os.environ.get("WEB_WARM_CONNECTIONS", os.environ.get("WEB_THREADS", "8")))
    if count <= 0:
        return
    from bookings import availability, one_statement_hold
    from config.api import tokens

    wrapper = connections[DEFAULT_DB_ALIAS]
    if hasattr(wrapper, "open_ahead"):  # PostgreSQL (kernel.database_backend)
        try:
            wrapper.open_ahead(count, [tokens.warm_connection, one_statement_hold.warm_connection])
        except Exception:
            logger.warning("database connections not opened ahead", exc_info=True)
    for client in (_cache_client(), availability.filters_client()):
        _fill_redis_pool(client, count)
        _open_own_connections(client, count)


def _cache_client():
    client = getattr(cache, "client", None)
    if client is None or not hasattr(client, "get_client"):
        return None  # the embedded mode's local-memory cache
    try:
        return client.get_client(write=True)
    except Exception:
        return None


def _fill_redis_pool(client, count: int) -> None:
    """`count` open connections in `client`'s pool (a single Redis's: a cluster client's are
    per node, left to grow)."""
    import redis

    pool = getattr(client, "connection_pool", None)
    if not isinstance(pool, redis.ConnectionPool):
        return
    taken = []
    try:
        for _ in range(count):
            taken.append(pool.get_connection())
    except redis.RedisError:
        logger.warning("Redis connections not opened ahead", exc_info=True)
    finally:
        for connection in taken:
            pool.release(connection)


def _open_own_connections(client, count: int) -> None:
    """`count` connections for the threads' own (kernel.redis_own_connection: the token
    check's and the hold filters' scripts), which the pool's do not serve."""
    import redis

    try:
        redis_own_connection.open_ahead(client, count)
    except redis.RedisError:
        logger.warning("Redis connections not opened ahead", exc_info=True)


def freeze_startup_heap() -> None:
    """Python's cyclic collector, from here on, looks only at what requests allocate.

    A started web process holds ~100 MB of long-lived objects (modules, settings, URL
    tables, models): every full collection walked them all, and each gen-0 collection ran
    after only 700 new container objects, several times per request.  Together that was
    ~6 % of a web process's CPU under scenario (a) (perf, docs/performance.md, "Issue 26:
    the server's share").  `gc.freeze()` moves everything alive now into a generation the
    collector never scans (nothing frozen is freed, and nothing needs to be: it lives as
    long as the process); the collector keeps running for requests' own cycles, after
    WEB_GC_GEN0 (default 7,000) new objects.  Called last, after `warm_up()`.
    WEB_GC_FREEZE=0 turns both off (Python's defaults)."""
    if os.environ.get("WEB_GC_FREEZE", "1") == "0":
        return
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(int(os.environ.get("WEB_GC_GEN0", "7000")), gen1, gen2)


def shorten_gil_switch() -> None:
    """A thread back from a database or Redis round trip waits for the GIL until a busy
    thread gives it up: Python's default is after 5 ms.  1 ms served 1.6x the requests per
    second at 0.6x the CPU per request (docs/performance.md).  Every HTTP server's entry
    point calls it (config/asgi.py, config/wsgi.py)."""
    sys.setswitchinterval(float(os.environ.get("WEB_GIL_SWITCH_MS", "1")) / 1000)
