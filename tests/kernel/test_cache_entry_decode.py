"""A cache value read raw (the token's user, the waiting-room protection values) is decoded
as `cache.get` decodes it, without django-redis's `int()` attempt on a pickled entry
(kernel.redis_clients.decode_cache_entry, issue 26): the same objects for every kind of
value, on the run's Redis and on the cluster, and no exception raised for a pickle.  The
control: with django-redis's own `decode` (the shortcut off) the probe sees the ValueError."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from kernel import redis_clients

pytestmark = pytest.mark.django_db

VALUES = [
    (("id", "username", "is_active"), "default", (7, "ann", True)),  # a token's user entry
    "9f1c2b7e4d5a4c3b8a6f0e1d2c3b4a59",  # the protection generation (a uuid's hex)
    ("generation", 0),  # a sale's protection entry
    0,
    7,
    -3,
    2**70,
    True,
    1.5,
    "12",
    b"\x80raw bytes",
    [1, "two"],
]


def raw_of(key: str) -> bytes | None:
    return cache.client.get_client(write=True).get(cache.make_key(key))


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_a_raw_entry_decodes_as_cache_get_does(redis_backend, value):
    cache.set("decode:probe", value, 30)
    decoded = redis_clients.decode_cache_entry(raw_of("decode:probe"))
    assert decoded == value == cache.get("decode:probe")
    assert type(decoded) is type(value)


@pytest.mark.parametrize("raw", [b"", b"garbage", b"\x80\x05broken", b" 12", b"-4", b"+5"])
def test_odd_raw_values_decode_as_django_redis_decodes_them(raw):
    def reference():
        try:
            return cache.client.decode(raw)
        except Exception:
            return None

    assert redis_clients.decode_cache_entry(raw) == reference()
    assert redis_clients.decode_cache_entry(None) is None


def int_attempts(monkeypatch) -> list[tuple[object, bool]]:
    """Each `int()` django-redis's decode tries (the value, whether it raised)."""
    from django_redis.client import default

    attempts = []

    def counted(value):
        try:
            number = int(value)
        except (ValueError, TypeError):
            attempts.append((value, True))
            raise
        attempts.append((value, False))
        return number

    monkeypatch.setattr(default, "int", counted, raising=False)
    return attempts


def test_a_pickled_entry_is_not_tried_as_an_int(monkeypatch):
    raws = []
    for value in [*VALUES[:3], 42]:
        cache.set("decode:probe", value, 30)
        raws.append(raw_of("decode:probe"))
    assert [raw[:1] for raw in raws] == [b"\x80", b"\x80", b"\x80", b"4"]
    attempts = int_attempts(monkeypatch)  # after the writes: `encode` asks isinstance(v, int)
    assert [redis_clients.decode_cache_entry(raw) for raw in raws] == [*VALUES[:3], 42]
    assert attempts == [(b"42", False)]  # an int is still read as django-redis reads it
    # Control: django-redis's own decode (the shortcut off) tries, and fails, each pickle.
    monkeypatch.setattr(redis_clients, "_decodes_ints_first", lambda client_class: False)
    assert [redis_clients.decode_cache_entry(raw) for raw in raws[:3]] == VALUES[:3]
    assert attempts[1:] == [(raw, True) for raw in raws[:3]]
