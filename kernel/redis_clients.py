"""One way to make a Redis client, single server or Redis Cluster, and the key tags.

Redis Cluster runs a Lua script, a MULTI or a multi-key command only when all its keys hash
to one slot.  A hash tag — the part of a key between the first `{` and the next `}` — is
what is hashed, so every key of one sale carries `{<sale_id>}` (`sale_tag`), every key of one
waiting room `{r<room_id>}` (`room_tag`) and every per-user key the user's (`user_tag`; for
a request authenticated by an API token, the token's: its cached user and its throttles):
each script and pipeline of the hot paths then touches one slot, on one primary
(tests/kernel/test_key_slots.py walks them; docs/operations.md lists them).

`REDIS_CLUSTER_URL` (settings) names the cluster as `redis://host:port,host:port,...`: any of
the nodes will do to discover the rest, several survive one being down at start-up.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from typing import Any
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException
from redis.retry import Retry


def sale_tag(sale_id: int | str) -> str:
    """The hash tag of one sale's keys: its hold filters and its seat map."""
    return f"{{{sale_id}}}"


def room_tag(room_id: int | str) -> str:
    """The hash tag of one waiting room's keys (a room fronts one sale; ids differ)."""
    return f"{{r{room_id}}}"


def user_tag(ident: str) -> str:
    """The hash tag of one client's keys ("user:5", "ip:…", "tok:<sha>"): its throttle
    windows.  A token-authenticated client is "tok:<sha>", the tag of its token's cached user
    too (`token_ident`), so the token check and the throttle are one pipeline on one slot."""
    return f"{{{ident}}}"


def token_digest(key: str) -> str:
    """An API token's hash: what keys and tags name instead of the secret."""
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def token_ident(digest: str) -> str:
    """The client named by an API token's hash (never the token itself)."""
    return f"tok:{digest}"


def cluster_nodes(url: str) -> tuple[list[ClusterNode], dict[str, Any]]:
    """`redis://h1:p1,h2:p2/?…` -> startup nodes and connection options (password, TLS)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise ValueError(f"REDIS_CLUSTER_URL must be redis:// or rediss://, not {url!r}")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    nodes = []
    for host_port in hosts.split(","):
        host, _, port = host_port.strip().rpartition(":")
        nodes.append(ClusterNode(host or host_port, int(port or 6379)))
    options: dict[str, Any] = {}
    if userinfo:
        username, _, password = userinfo.rpartition(":")
        options["password"] = password or None
        if username:
            options["username"] = username
    if parts.scheme == "rediss":
        options["ssl"] = True
    return nodes, options


def connect(url: str, *, cluster: bool, **options: Any) -> redis.Redis | RedisCluster:
    """A client for `url`: `RedisCluster` when `cluster`, else `redis.Redis`.

    `options` are redis-py's (timeouts, retry).  A cluster client also follows MOVED/ASK
    and re-reads the slot map after a failover, which a plain client pointed at one node
    cannot (django-redis has no cluster client: kernel/cluster_cache.py)."""
    if not cluster:
        return redis.Redis.from_url(url, **options)
    nodes, url_options = cluster_nodes(url)
    # A one-off outage is a failure for the caller to handle (the filters fail open, the
    # queue answers 503); retrying for a whole node timeout inside a request would not help.
    options.setdefault("retry", Retry(NoBackoff(), 1))
    try:
        return _Cluster(startup_nodes=nodes, **url_options, **options)
    except RedisClusterException as exc:
        raise redis.ConnectionError(str(exc)) from exc


class _Cluster(RedisCluster):
    """`RedisCluster` whose "cannot reach the cluster" is a `redis.ConnectionError`, as a
    single server's is: redis-py raises `RedisClusterException`, which is no `RedisError`,
    and every caller here fails open (or answers 503) on `RedisError` alone."""

    def execute_command(self, *args, **kwargs):
        try:
            return super().execute_command(*args, **kwargs)
        except RedisClusterException as exc:
            raise redis.ConnectionError(str(exc)) from exc


def decode_cache_entry(raw: bytes | None, *, backend: Any = None) -> Any:
    """A django-redis cache value read raw (in a pipeline or a script, not by `cache.get`),
    decoded as `cache.get` would; missing or unreadable, it is a miss (None).

    `backend`: the cache (`caches["default"]`) when the caller has it at hand: each `cache.`
    is a lookup of the context's cache, dearer than the decoding (issue 26).  A pickle (the
    first byte of protocol 2 and later, which no integer entry starts with) under
    django-redis's own serializer and no compressor is `pickle.loads`, what its `decode`
    comes to after trying it as an integer: the entries of a hold's round trips are."""
    if raw is None:
        return None
    client = (backend if backend is not None else _default_cache()).client
    try:
        if raw[:1] == b"\x80" and _plain_pickle(client):
            return pickle.loads(raw)
        return client.decode(raw)
    except Exception:  # an unreadable entry is a miss, as for cache.get
        return None


def cache_get_many(keys: list[str], *, backend: Any = None) -> dict | None:
    """`cache.get_many(keys)` for the warm cached reads (the seat map, the search): on a
    single Redis (django-redis), one MGET on the thread's own connection
    (kernel.redis_own_connection), the entries decoded as `decode_cache_entry` decodes them
    (an unreadable one is a miss); otherwise the cache's own `get_many`.  {} when Redis does
    not answer, as django-redis answers with IGNORE_EXCEPTIONS (without: it raises)."""
    from kernel import redis_own_connection

    backend = _default_cache() if backend is None else backend
    client = getattr(backend, "client", None)
    if type(client) is not _django_redis_classes()[0] or not keys:
        return backend.get_many(keys)
    raw_client = client.get_client(write=False)
    if not redis_own_connection.takes_own_connection(raw_client):
        return backend.get_many(keys)
    made = [backend.make_key(key) for key in keys]
    try:
        values = redis_own_connection.run_command(raw_client, "MGET", *made)
    except redis.RedisError:
        if getattr(backend, "_ignore_exceptions", False):
            return {}
        raise
    return {
        key: decode_cache_entry(raw, backend=backend)
        for key, raw in zip(keys, values, strict=True)
        if raw is not None
    }


def _default_cache():
    # The context's default cache itself, looked up once: every attribute of the
    # `django.core.cache.cache` proxy looks it up again (`.client`, `.make_key` per key,
    # `.client` per entry: about 15 calls of a cached search's MGET, issue 26).
    return _caches()["default"]


@functools.cache
def _caches() -> Any:
    # Imported on first use (settings import this module before Django is set up); the
    # handler is one object for the process, its connections per context.
    from django.core.cache import caches

    return caches


def _plain_pickle(client: Any) -> bool:
    """Whether `client` (a django-redis client) decodes a non-integer as `pickle.loads`."""
    default_client, pickle_serializer, no_compressor = _django_redis_classes()
    return (
        isinstance(client, default_client)
        and type(getattr(client, "_serializer", None)) is pickle_serializer
        and type(getattr(client, "_compressor", None)) is no_compressor
    )


@functools.cache
def _django_redis_classes() -> tuple[type, type, type]:
    # Imported on first use: settings import this module before Django is set up.
    from django_redis.client import DefaultClient
    from django_redis.compressors.identity import IdentityCompressor
    from django_redis.serializers.pickle import PickleSerializer

    return DefaultClient, PickleSerializer, IdentityCompressor
