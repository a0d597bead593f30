"""A command on the thread's own connection (kernel.redis_own_connection, issue 26) answers
what redis-py's `execute_command` answers; a script Redis lost runs by its text; an error is
the `RedisError` the callers fail open on and leaves no reply behind for the next command; two
threads never share a connection; a fork or a connection the server closed gets a new one;
anything but a plain `redis.Redis` goes redis-py's way."""

from __future__ import annotations

import hashlib
import os
import socket
import threading

import pytest
import redis
from redis.cluster import RedisCluster

from kernel import redis_own_connection as own
from tests.redis_wire import unknown_to_redis

SCRIPT = "return {KEYS[1], tonumber(ARGV[1]) + 1, redis.call('GET', KEYS[1]) or false, {7}}"
SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()


@pytest.fixture
def client(settings):
    from tests import cluster_run

    if cluster_run.WHOLE_RUN_CLUSTER is not None:
        pytest.skip("a single server's client; a cluster's goes redis-py's way (tested below)")
    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=0.5)
    client.delete("own:a", "own:b", "own:missing")
    client.set("own:a", b"\x80A")
    client.set("own:b", b"B")
    yield client
    client.delete("own:a", "own:b")


def owned(client) -> own._Owned:
    return own._local.by_pool[id(client.connection_pool)]


def test_the_commands_it_takes_have_no_reply_parsing_in_redis_py():
    from redis._parsers.helpers import _RedisCallbacks, _RedisCallbacksRESP2, _RedisCallbacksRESP3

    for callbacks in (_RedisCallbacks, _RedisCallbacksRESP2, _RedisCallbacksRESP3):
        assert own.UNPARSED.isdisjoint(callbacks), callbacks


@pytest.mark.parametrize("decode", [False, True])
def test_answers_as_redis_py_does(settings, client, decode):
    client = redis.Redis.from_url(settings.REDIS_URL, decode_responses=decode)
    client.script_load(SCRIPT)
    for args in (
        ("GET", "own:b"),
        ("GET", "own:missing"),
        ("MGET", "own:b", "own:missing"),
        ("EVALSHA", SHA, 1, "own:b", 5),
        ("EVALSHA", SHA, 1, "own:missing", 5),
    ):
        assert own.run_command(client, *args) == client.execute_command(*args), args
    assert own.run_command(client, "GET", "own:b") == ("B" if decode else b"B")


def test_a_script_redis_lost_runs_by_its_text_with_the_same_answer(client):
    lost, lost_sha = unknown_to_redis(SCRIPT)
    assert client.script_exists(lost_sha) == [False]
    assert own.run_script(client, lost, lost_sha, ["own:a"], [1]) == [b"own:a", 2, b"\x80A", [7]]
    assert client.script_exists(lost_sha) == [True]  # EVAL cached it: EVALSHA next time
    assert own.run_script(client, lost, lost_sha, ["own:a"], [1]) == [b"own:a", 2, b"\x80A", [7]]
    with pytest.raises(redis.exceptions.NoScriptError):  # a plain NOSCRIPT is not swallowed
        own.run_command(client, "EVALSHA", "0" * 40, 0)
    assert owned(client).connection.is_connected  # an error reply leaves it usable


def test_an_unreachable_redis_is_a_connection_error_and_a_later_call_reconnects(client):
    gone = redis.Redis(port=1, socket_connect_timeout=0.2)
    with pytest.raises(redis.ConnectionError):
        own.run_command(gone, "GET", "own:a")
    own.run_command(client, "GET", "own:a")
    client.execute_command(
        "CLIENT", "KILL", "ID", own.execute_on_own_connection(client, "CLIENT", "ID")
    )
    assert own.run_command(client, "GET", "own:b") == b"B"  # re-made, not failed


def test_a_timeout_is_a_timeout_error_and_drops_the_connection():
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    try:
        client = redis.Redis(port=silent.getsockname()[1], socket_timeout=0.1)
        with pytest.raises(redis.TimeoutError):
            own.run_command(client, "GET", "own:a")
        assert not owned(client).connection.is_connected
    finally:
        silent.close()


def test_an_interrupted_command_leaves_no_reply_for_the_next(client, monkeypatch):
    """Raised after the command went out and before its reply was read (an interrupt, a
    signal handler): the reply must not be taken as the next command's.  The control of the
    disconnect: without it, GET own:b answers own:a's value.  The next command's poll is made
    to find nothing (the reply still on its way): whether a reply already arrived when it polls
    is timing, and the poll alone would then hide a missing disconnect."""
    own.run_command(client, "GET", "own:a")
    connection = owned(client).connection
    real_send = type(connection).send_packed_command  # both packers' commands go out here

    def send_then_interrupt(self, *args, **kwargs):
        real_send(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(connection, "send_packed_command", send_then_interrupt.__get__(connection))
    with pytest.raises(KeyboardInterrupt):
        own.run_command(client, "GET", "own:a")
    monkeypatch.undo()
    monkeypatch.setattr(connection, "can_read", lambda timeout=0: False)
    assert own.run_command(client, "GET", "own:b") == b"B"


def test_two_threads_never_share_a_connection(client):
    client.set("own:t0", b"0")
    client.set("own:t1", b"1")
    barrier = threading.Barrier(2)
    seen: dict[int, set] = {}
    wrong: list = []

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(300):
            answer = own.run_command(client, "GET", f"own:t{i}")
            if answer != str(i).encode():
                wrong.append((i, answer))
        seen[i] = {id(owned(client).connection)}

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.delete("own:t0", "own:t1")
    assert wrong == []
    assert seen[0].isdisjoint(seen[1])


def test_a_forked_child_makes_its_own_connection(client):
    """The parent's socket stays the parent's: the child's commands go on a new one, and the
    parent's next answer is its own."""
    own.run_command(client, "GET", "own:a")
    parents = owned(client).connection
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        try:
            answer = own.run_command(client, "GET", "own:b")
            made = owned(client).connection is not parents and owned(client).pid == os.getpid()
            os.write(write_end, b"ok" if answer == b"B" and made else b"bad")
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    assert os.read(read_end, 16) == b"ok"
    os.close(read_end)
    assert own.run_command(client, "GET", "own:a") == b"\x80A"
    assert owned(client).connection is parents


def test_anything_but_a_plain_client_goes_redis_pys_way(client, monkeypatch):
    class Wrapped(redis.Redis):
        pass

    wrapped = Wrapped(connection_pool=client.connection_pool)
    single = redis.Redis(connection_pool=client.connection_pool, single_connection_client=True)
    assert own.takes_own_connection(client)
    assert not own.takes_own_connection(wrapped)
    assert not own.takes_own_connection(single)
    assert not own.takes_own_connection(object.__new__(RedisCluster))
    sent = []
    monkeypatch.setattr(Wrapped, "execute_command", lambda self, *a: sent.append(a) or b"B")
    assert own.run_script(wrapped, SCRIPT, SHA, ["own:b"], [1]) == b"B"
    assert own.run_command(wrapped, "GET", "own:b") == b"B"
    assert sent == [("EVALSHA", SHA, 1, "own:b", 1), ("GET", "own:b")]
    single.close()


def test_threads_first_commands_take_the_connections_opened_ahead(client):
    """config/warmup.py opens them at start: threads meeting their first requests together
    (a sale's start) do not all connect at once.  One thread more than opened connects."""
    pool = client.connection_pool
    assert own.open_ahead(client, 2) == 2
    opened = list(own._ahead[id(pool)][2])
    assert [connection.is_connected for connection in opened] == [True, True]
    assert own._opened_ahead(pool, os.getpid() + 1) is None  # a forked child's are its own
    used = []
    barrier = threading.Barrier(3)

    def first_command() -> None:
        barrier.wait()
        assert own.run_command(client, "GET", "own:b") == b"B"
        used.append(owned(client).connection)

    threads = [threading.Thread(target=first_command) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(used) == 3
    assert sum(any(c is o for o in opened) for c in used) == 2
    assert own._ahead[id(pool)][2] == []
    for connection in used:
        connection.disconnect()
