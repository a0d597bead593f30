"""A command on the thread's own connection (kernel.redis_own_connection) packed by hiredis in
one call writes the bytes redis-py's packer writes; whatever hiredis would pack differently (or
refuse with another error) is packed by redis-py as before (issue 26)."""

from __future__ import annotations

import enum

import hiredis
import pytest
import redis
from redis.connection import Connection

from kernel import redis_own_connection as own


class Level(enum.IntEnum):
    HIGH = 3


class Key(str):
    pass


# (arguments, packed by hiredis): the exact plain types go hiredis's way, anything else redis-py's.
TABLE = [
    (("GET", "own:pack"), True),
    (("GET", b"own:pack"), True),
    (("EVALSHA", "0" * 40, 2, "own:pack", "k\u00e9y", 0, -5, 10**30, b"\x80\x00"), True),
    (("EVALSHA", "0" * 40, 0, 0.1, 1e20, -0.0, float("inf"), ""), True),
    (("MGET", "own:pack", " ", "a b", "\x00"), True),
    (("GET", Level.HIGH), False),  # redis-py writes its repr; hiredis refuses it
    (("GET", Key("own:pack")), False),
    (("GET", memoryview(b"own:pack")), False),
    (("EVALSHA", "0" * 40, 0, True), False),  # redis-py's DataError, not hiredis's TypeError
    (("SCRIPT EXISTS", "0" * 40), False),  # not one of UNPARSED: redis-py splits the name
]


@pytest.fixture
def client(settings):
    from tests import cluster_run

    if cluster_run.WHOLE_RUN_CLUSTER is not None:
        pytest.skip("a single server's client; a cluster's goes redis-py's way")
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=0.5)


def _sent(client, monkeypatch, args) -> tuple[bytes | str, bool]:
    """What the own connection writes for `args` (or the error's type), and whether hiredis
    packed it; nothing reaches the server."""
    written: list[bytes] = []
    hiredis_packed: list[bytes] = []
    real_packed = own.send_packed

    def capture(connection, command, check_health=True):
        written.append(b"".join(command))
        raise redis.ConnectionError("captured")  # the reply is not the point

    monkeypatch.setattr(Connection, "send_packed_command", capture)
    monkeypatch.setattr(
        own, "send_packed", lambda c, packed: hiredis_packed.append(1) or real_packed(c, packed)
    )
    try:
        own.execute_on_own_connection(client, *args)
    except redis.ConnectionError:
        pass
    except Exception as error:  # the error's type is what is compared
        return type(error).__name__, bool(hiredis_packed)
    finally:
        monkeypatch.undo()
    return written[0], bool(hiredis_packed)


def _redis_pys(args) -> bytes | str:
    try:
        return b"".join(Connection().pack_command(*args))
    except Exception as error:
        return type(error).__name__


@pytest.mark.parametrize(("args", "by_hiredis"), TABLE)
def test_writes_what_redis_pys_packer_writes(client, monkeypatch, args, by_hiredis):
    assert _sent(client, monkeypatch, args) == (_redis_pys(args), by_hiredis)


def test_control_hiredis_alone_differs_on_what_goes_redis_pys_way():
    """Without the guards: an IntEnum and a bool would be hiredis's TypeError (not a RedisError
    the callers fail open on) instead of redis-py's bytes and DataError, and a name with a
    space one argument, not two.  (A str subclass and a memoryview pack alike; they stay
    redis-py's all the same.)"""
    differs = []
    for args, by_hiredis in TABLE:
        try:
            packed: bytes | str = hiredis.pack_command(args)
        except Exception as error:
            packed = type(error).__name__
        if packed != _redis_pys(args):
            differs.append(args)
        assert by_hiredis or args in differs or type(args[1]) in (Key, memoryview)
    assert differs == [
        ("GET", Level.HIGH),
        ("EVALSHA", "0" * 40, 0, True),
        ("SCRIPT EXISTS", "0" * 40),
    ]


def test_another_encoding_goes_redis_pys_way(settings, monkeypatch):
    """hiredis writes UTF-8 whatever the client's encoding: a Latin-1 client's "é" is b"\\xe9"
    (the control: hiredis's own bytes differ)."""
    from tests import cluster_run

    if cluster_run.WHOLE_RUN_CLUSTER is not None:
        pytest.skip("a single server's client")
    latin = redis.Redis.from_url(settings.REDIS_URL, encoding="latin-1")
    args = ("GET", "caf\u00e9")
    sent, by_hiredis = _sent(latin, monkeypatch, args)
    assert (sent, by_hiredis) == (b"*2\r\n$3\r\nGET\r\n$4\r\ncaf\xe9\r\n", False)
    assert hiredis.pack_command(args) != sent


def test_a_hiredis_packed_command_answers(client):
    client.set("own:pack", b"P")
    try:
        assert own.run_command(client, "GET", "own:pack") == b"P"
        assert own.run_command(client, "MGET", "own:pack", "own:none") == [b"P", None]
    finally:
        client.delete("own:pack")


@pytest.mark.parametrize(("decode", "protocol"), [(False, 2), (True, 2), (False, 3), (True, 3)])
def test_set_if_absent_answers_as_redis_pys_set(settings, client, decode, protocol):
    """kernel.kicks' flag: True when set, False when it stood, as redis-py's `set(nx=True)`
    (True / None) says; decoded or not, RESP2 or RESP3.  The control: reading the raw reply as
    b"OK" would be wrong for a decoding client (its reply is "OK")."""
    other = redis.Redis.from_url(settings.REDIS_URL, decode_responses=decode, protocol=protocol)
    answers = []
    raw = []
    try:
        for set_it in (
            lambda: own.set_if_absent(other, "own:flag", 1, px=5000),
            lambda: bool(other.set("own:flag", 1, nx=True, px=5000)),
        ):
            client.delete("own:flag")
            answers.append((set_it(), set_it()))
            assert 4000 < client.pttl("own:flag") <= 5000
        client.delete("own:flag")
        raw.append(own.execute_on_own_connection(other, "SET", "own:flag", 1, "NX", "PX", 5000))
    finally:
        client.delete("own:flag")
        other.close()
    assert answers == [(True, False), (True, False)]
    assert (raw[0] == b"OK") is not decode  # the control


def test_set_if_absent_on_a_client_it_does_not_take_is_redis_pys_set(client, monkeypatch):
    class Wrapped(redis.Redis):
        pass

    wrapped = Wrapped(connection_pool=client.connection_pool)
    calls = []
    monkeypatch.setattr(Wrapped, "set", lambda self, *a, **kw: calls.append((a, kw)) or None)
    assert own.set_if_absent(wrapped, "own:flag", 1, px=10) is False
    assert calls == [(("own:flag", 1), {"nx": True, "px": 10})]
