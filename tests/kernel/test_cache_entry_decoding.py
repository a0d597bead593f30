"""`redis_clients.decode_cache_entry` (issue 26): a raw cache value read in a hold's round
trips (the token's cached user, the waiting room's protection entries) decodes as `cache.get`
would.  Its shortcut, a pickle under django-redis's own serializer and no compressor read by
`pickle.loads`, gives what django-redis's `decode` gives; any other entry, serializer or
compressor goes django-redis's way.  `backend=` decodes with the cache the caller holds,
without looking the context's cache up again.  Controls: a shortcut that decodes otherwise,
or one taken under another serializer, is caught."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django_redis.client import DefaultClient
from django_redis.serializers.json import JSONSerializer

from kernel import redis_clients

pytestmark = pytest.mark.django_db

VALUES = [
    (("id", "is_active"), "default", (7, True)),  # a token's user entry's shape
    ("c0ffee", 12),  # a protection entry's shape
    {"nested": [1, 2.5, None, "é"]},
    "plain text",
    True,  # a bool is pickled, not written as an integer
    None,  # a cached None (cache.set(key, None)) is a pickle too
]
INTEGERS = [42, -3, 10**30]  # written raw, as digits


@pytest.fixture
def django_redis_cache():
    from tests import cluster_run

    if cluster_run.WHOLE_RUN_CLUSTER is not None or not isinstance(
        getattr(cache, "client", None), DefaultClient
    ):
        pytest.skip("the shortcut is django-redis's: this run's cache is another backend")
    return caches[DEFAULT_CACHE_ALIAS]


def raw_entries(backend) -> list[bytes]:
    """Each value as django-redis writes it (integers raw, the rest pickled), read raw."""
    raw = backend.client.get_client()
    entries = []
    for index, value in enumerate([*VALUES, *INTEGERS]):
        backend.set(f"decoding:{index}", value, 60)
        entries.append(raw.get(backend.make_key(f"decoding:{index}")))
    return entries


def test_a_raw_entry_decodes_as_django_redis_decodes_it(django_redis_cache):
    backend = django_redis_cache
    entries = raw_entries(backend)
    assert sum(raw[:1] == b"\x80" for raw in entries) == len(VALUES)  # the shortcut's
    for raw in entries:
        expected = backend.client.decode(raw)
        assert redis_clients.decode_cache_entry(raw) == expected
        assert redis_clients.decode_cache_entry(raw, backend=backend) == expected
    assert redis_clients.decode_cache_entry(None) is None
    assert redis_clients.decode_cache_entry(b"\x80not a pickle") is None  # a miss


def test_the_shortcut_is_taken_for_plain_pickles_only(django_redis_cache, monkeypatch):
    backend = django_redis_cache
    decoded = []
    real = DefaultClient.decode
    monkeypatch.setattr(DefaultClient, "decode", lambda c, raw: decoded.append(raw) or real(c, raw))
    pickled, whole = raw_entries(backend)[0], raw_entries(backend)[len(VALUES)]
    decoded.clear()
    assert redis_clients.decode_cache_entry(pickled, backend=backend) == VALUES[0]
    assert redis_clients.decode_cache_entry(whole, backend=backend) == 42
    assert decoded == [whole]


def test_another_serializer_goes_django_redis_way(django_redis_cache):
    backend = copy.copy(django_redis_cache)
    backend._client = copy.copy(django_redis_cache.client)
    backend._client._serializer = JSONSerializer({})
    raw = backend.client.encode({"a": 1})
    assert raw[:1] != b"\x80"
    assert redis_clients.decode_cache_entry(raw, backend=backend) == {"a": 1}
    # A JSON serializer's entry that starts as a pickle would is not unpickled.
    assert not redis_clients._plain_pickle(backend.client)
    assert redis_clients._plain_pickle(django_redis_cache.client)


def test_backend_spares_the_lookup_of_the_context_cache(django_redis_cache, monkeypatch):
    raw = raw_entries(django_redis_cache)[1]

    def no_lookup():
        raise AssertionError("the context's cache was looked up")

    monkeypatch.setattr(redis_clients, "_default_cache", no_lookup)
    assert redis_clients.decode_cache_entry(raw, backend=django_redis_cache) == VALUES[1]
    # Control: without the backend it is looked up.
    with pytest.raises(AssertionError, match="looked up"):
        redis_clients.decode_cache_entry(raw)


def test_control_a_shortcut_that_decodes_otherwise_is_caught(django_redis_cache, monkeypatch):
    # Django-redis keeps the real pickle: only the shortcut's answers change.
    monkeypatch.setattr(redis_clients, "pickle", SimpleNamespace(loads=lambda raw: "other"))
    with pytest.raises(AssertionError):
        test_a_raw_entry_decodes_as_django_redis_decodes_it(django_redis_cache)


def test_control_a_shortcut_under_any_serializer_is_caught(django_redis_cache, monkeypatch):
    monkeypatch.setattr(redis_clients, "_plain_pickle", lambda client: True)
    with pytest.raises(AssertionError):
        test_another_serializer_goes_django_redis_way(django_redis_cache)


def test_get_many_on_the_threads_own_connection_answers_as_the_cache_does(
    django_redis_cache, monkeypatch
):
    """`cache_get_many` (the warm seat map's and search's read, issue 26): one MGET on the
    thread's own connection, the same dict as `cache.get_many`, missing keys left out."""
    from kernel import redis_own_connection
    from tests.redis_wire import record_sent_commands

    backend = django_redis_cache
    raw_entries(backend)
    keys = [f"decoding:{i}" for i in range(len(VALUES) + len(INTEGERS))] + ["decoding:none"]
    backend.delete("decoding:none")
    redis_clients.cache_get_many(keys, backend=backend)  # this thread's connection made
    sent = record_sent_commands(monkeypatch)
    assert redis_clients.cache_get_many(keys, backend=backend) == backend.get_many(keys)
    assert sent == ["MGET", "MGET"]
    taken = []
    own = redis_own_connection.execute_on_own_connection
    monkeypatch.setattr(
        redis_own_connection,
        "execute_on_own_connection",
        lambda client, *args: taken.append(args[0]) or own(client, *args),
    )
    redis_clients.cache_get_many(keys, backend=backend)
    assert taken == ["MGET"]  # the first of the two above: not the cache's own path


def test_get_many_with_redis_down_answers_as_the_cache_does(django_redis_cache, monkeypatch):
    import redis

    backend = django_redis_cache
    gone = redis.Redis(port=1, socket_connect_timeout=0.2)
    monkeypatch.setattr(backend.client, "get_client", lambda write=True: gone)
    assert redis_clients.cache_get_many(["decoding:0"], backend=backend) == {}
    assert backend.get_many(["decoding:0"]) == {}


def test_without_a_backend_the_context_cache_is_looked_up_once(django_redis_cache):
    """`cache_get_many(keys)` and `decode_cache_entry(raw)` use the context's cache itself,
    not the `cache` proxy (which looks it up again for each attribute, issue 26), and still
    answer as the cache does."""
    from django.utils.connection import ConnectionProxy

    raw_entries(django_redis_cache)
    keys = [f"decoding:{i}" for i in range(len(VALUES))]
    found = redis_clients._default_cache()
    assert found is caches[DEFAULT_CACHE_ALIAS] and not isinstance(found, ConnectionProxy)
    assert redis_clients.cache_get_many(keys) == cache.get_many(keys)
    # Control: the proxy is what the check above refuses.
    assert isinstance(cache, ConnectionProxy)
