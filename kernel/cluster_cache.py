"""Django's cache on a Redis Cluster: Django's own Redis backend with redis-py's `RedisCluster`.

Why this and not django-redis: django-redis (7.0) has no cluster client — its clients hold
one connection pool per server and would send every key to the first node, which answers
MOVED for two thirds of them.  Django's built-in `RedisCache` is a thin layer over redis-py
whose client is one replaceable method (`get_client`), and redis-py's `RedisCluster` is the
maintained cluster client (slot map, MOVED/ASK, re-discovery after a failover).  So this
backend is Django's plus three changes, nothing else:

* `get_client` returns one shared `RedisCluster` (kernel/redis_clients.py);
* `get_many` / `set_many` group keys by slot (`MGET` / a pipeline per slot): the keys a
  reader fetches together (a seat map's version, meta and body) share the sale's hash tag
  and so still come in one `MGET`; keys of several sales take one round trip per node;
* every Redis error is logged and answered like a miss (`IGNORE_EXCEPTIONS`, as django-redis
  is configured in settings): the cache is a fast path, the database answers instead.

`cache.client.get_client(write=True)` is the raw client, and `cache.client.decode(raw)` turns
a raw value read on it back into the object, both as with django-redis (the throttles
pipeline on the first; the token check reads the cached user in that pipeline and decodes it
with the second, config/api/tokens.py).
"""

from __future__ import annotations

import functools
import logging
import threading

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import RedisError

from kernel.redis_clients import connect

logger = logging.getLogger(__name__)


class ClusterCacheClient(RedisCacheClient):
    def __init__(self, servers, **options) -> None:
        self._timeout = options.pop("SOCKET_TIMEOUT", 1)
        self._connect_timeout = options.pop("SOCKET_CONNECT_TIMEOUT", 1)
        super().__init__(servers, **options)
        self._cluster = None
        self._lock = threading.Lock()

    def get_client(self, key=None, *, write=False):
        # One client per process: a RedisCluster holds a pool per node and the slot map.
        if self._cluster is None:
            with self._lock:
                if self._cluster is None:
                    self._cluster = connect(
                        ",".join(self._servers),
                        cluster=True,
                        socket_timeout=self._timeout,
                        socket_connect_timeout=self._connect_timeout,
                    )
        return self._cluster

    def decode(self, value):
        """A raw value of this cache (from a pipeline on the raw client) as its object."""
        return self._serializer.loads(value)

    def get_many(self, keys):
        keys = list(keys)
        values = self.get_client(None).mget_nonatomic(keys) if keys else []
        found = zip(keys, values, strict=True)
        return {k: self._serializer.loads(v) for k, v in found if v is not None}

    def set_many(self, data, timeout):
        # Per key, not MSET: MSET of keys in several slots is refused (CROSSSLOT).
        pipe = self.get_client(None, write=True).pipeline(transaction=False)
        for key, value in data.items():
            pipe.set(key, self._serializer.dumps(value), ex=timeout)
        pipe.execute()

    def clear(self):
        return bool(self.get_client(None, write=True).flushdb(target_nodes="primaries"))


def _ignoring_errors(default):
    def wrap(method):
        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except RedisError as exc:
                logger.warning("cache on the cluster failed, treated as a miss: %s", exc)
                return default(args, kwargs) if callable(default) else default

        return guarded

    return wrap


class ClusterCache(RedisCache):
    """`CACHES[...]["BACKEND"] = "kernel.cluster_cache.ClusterCache"`, `LOCATION` one or more
    `redis://host:port` of the cluster's nodes (comma-separated)."""

    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = ClusterCacheClient

    @property
    def client(self) -> ClusterCacheClient:
        return self._cache

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except RedisError as exc:
            logger.warning("cache on the cluster failed, treated as a miss: %s", exc)
            return default

    add = _ignoring_errors(False)(RedisCache.add)
    set = _ignoring_errors(None)(RedisCache.set)
    touch = _ignoring_errors(False)(RedisCache.touch)
    delete = _ignoring_errors(False)(RedisCache.delete)
    get_many = _ignoring_errors(lambda args, kwargs: {})(RedisCache.get_many)
    has_key = _ignoring_errors(False)(RedisCache.has_key)
    incr = _ignoring_errors(None)(RedisCache.incr)
    set_many = _ignoring_errors([])(RedisCache.set_many)
    delete_many = _ignoring_errors(None)(RedisCache.delete_many)
    clear = _ignoring_errors(False)(RedisCache.clear)
