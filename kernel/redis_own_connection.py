"""One Redis command on a connection of the calling thread's own, without redis-py's
per-command machinery (issue 26).

`redis.Redis.execute_command` takes a connection from the pool (a lock and a `can_read()`
poll), runs the command in `Retry.call_with_retry` with a closure, records the operation's
duration for observability, checks for HIMPORT SET and looks up a response callback: about
twice the CPU of sending the command and reading its reply.  The hot paths (the token check
and throttle, the hold filters' scripts) send one command and read one reply, so here each
thread keeps one connection per pool, made as the pool makes its own (its connection class
and keyword arguments), and talks to it directly.

What differs from redis-py's path, on purpose:
* No retry.  Every caller here fails open on `redis.RedisError` (the throttle lets the
  request through, the hold filters step aside for PostgreSQL), which is what the hold
  filters' client (`Retry(NoBackoff(), 0)`) already did.  The connection is polled before
  each command (`can_read()`, about 2 µs), as the pool polls every connection it hands out,
  so one the server closed meanwhile (a restart, a proxy's idle timeout) is re-made rather
  than failing the call.
* The pool's `max_connections` does not count these: one connection per thread per pool.
* Only a plain `redis.Redis` without client-side caching or a single-connection lock, and
  only commands redis-py answers unparsed (no response callback: EVALSHA, EVAL, GET, MGET):
  anything else (a RedisCluster, a subclass) goes redis-py's way, so the answer is the same
  bytes, ints and lists the callers read today (`decode_responses` is the connection's own).

The command is packed by hiredis's `pack_command` in one call when every argument is a plain
`str`, `bytes`, `int` or `float` (exact types) and the connection encodes as UTF-8, strictly
(redis-py's default): the same bytes redis-py's packer writes, without its ~90 Python calls
per command (a generator, `Encoder.encode` per argument).  Anything else (a subclass such as
an IntEnum, which redis-py writes as its `repr`; a bool, which it refuses; a memoryview; another
encoding) is packed by redis-py as before.

A connection that fails in any way (a socket error, a timeout, an interrupt) is
disconnected before the error goes on: a late reply can never be read as the next
command's.  The next call reconnects.  An error reply (NOSCRIPT) leaves it clean.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import hiredis
import redis
from redis.exceptions import NoScriptError, ResponseError

# Commands with no response callback in redis-py (RESP2 and RESP3): their reply is the answer.
UNPARSED = frozenset({"EVALSHA", "EVAL", "GET", "MGET"})
# Besides UNPARSED, a command whose raw reply the caller reads itself (`set_if_absent`).
_PACKED_HERE = UNPARSED | {"SET"}
# Arguments hiredis packs byte for byte as redis-py's Encoder does (repr of a number, UTF-8 of
# a str): exact types only, so an int or str subclass takes redis-py's packer.
_PLAIN_ARGUMENTS = frozenset({str, bytes, int, float})

_local = threading.local()
# Connections opened ahead (config/warmup.py) for threads' first commands, by pool id:
# (the pool, the process that opened them, the connections).
_ahead: dict[int, tuple[object, int, list]] = {}
_ahead_lock = threading.Lock()


class _Owned:
    """A thread's connection to one pool's server, and the process that made it."""

    __slots__ = ("connection", "pid", "pool")

    def __init__(self, pool) -> None:
        self.pool = pool  # kept alive with its connection: the key is its id
        self.pid = os.getpid()
        self.connection = _opened_ahead(pool, self.pid) or pool.connection_class(
            **pool.connection_kwargs
        )


def takes_own_connection(client) -> bool:
    """Whether `client`'s commands may go this way: a plain single-server client."""
    return (
        type(client) is redis.Redis
        and client.connection is None  # a single-connection client serialises on its lock
        and getattr(client.connection_pool, "cache", None) is None  # client-side caching
    )


def open_ahead(client, count: int) -> int:
    """Open `count` connections to `client`'s server now, for as many threads' first commands
    (config/warmup.py): at the start of a sale every HTTP thread would otherwise connect at
    once, in its first request.  How many were opened (none for a client that goes redis-py's
    way); a `redis.RedisError` if the server does not answer."""
    if not takes_own_connection(client):
        return 0
    pool = client.connection_pool
    opened = []
    for _ in range(count):
        connection = pool.connection_class(**pool.connection_kwargs)
        connection.connect()
        opened.append(connection)
    with _ahead_lock:
        _ahead.setdefault(id(pool), (pool, os.getpid(), []))[2].extend(opened)
    return count


def _opened_ahead(pool, pid: int):
    """A connection `open_ahead` opened for `pool` in this process, or None."""
    with _ahead_lock:  # once per thread and pool: its first command
        stock = _ahead.get(id(pool))
        if stock is None or stock[0] is not pool or stock[1] != pid or not stock[2]:
            return None
        return stock[2].pop()


def _connection(client):
    """The calling thread's connection to `client`'s server, made on first use (and again in
    a forked child: the parent's socket is the parent's)."""
    pool = client.connection_pool
    owned_by_pool = getattr(_local, "by_pool", None)
    if owned_by_pool is None:
        owned_by_pool = _local.by_pool = {}
    owned = owned_by_pool.get(id(pool))
    if owned is None or owned.pool is not pool or owned.pid != os.getpid():
        owned = owned_by_pool[id(pool)] = _Owned(pool)
    connection = owned.connection
    if connection.is_connected:  # made here: not yet; opened ahead: it may have lain idle
        try:
            stale = connection.can_read()  # EOF (closed by the server) or stray data
        except redis.ConnectionError:
            stale = True  # can_read has disconnected it
        if stale:
            connection.disconnect()
    return connection


def run_command(client, *args):
    """`client.execute_command(*args)` for one of the UNPARSED commands: the raw reply."""
    if not takes_own_connection(client) or args[0] not in UNPARSED:
        return client.execute_command(*args)
    return execute_on_own_connection(client, *args)


def execute_on_own_connection(client, *args):
    """Send `args` on the thread's connection to `client`'s server and read the reply."""
    connection = _connection(client)
    try:
        encoder = connection.encoder
        if (
            args[0] in _PACKED_HERE  # a name without spaces: redis-py would split one that has
            and encoder.encoding == "utf-8"
            and encoder.encoding_errors == "strict"
            and _PLAIN_ARGUMENTS.issuperset(map(type, args))
        ):
            send_packed(connection, hiredis.pack_command(args))
        else:
            connection.send_command(*args)
        return connection.read_response()
    except ResponseError:  # a whole error reply was read: the connection is clean
        raise
    except BaseException:
        # redis-py disconnects on its own errors; this also covers anything raised between
        # the send and the read (an interrupt, a signal handler's exception).
        connection.disconnect()
        raise


def set_if_absent(client, key: str, value: str | int, *, px: int) -> bool:
    """`client.set(key, value, nx=True, px=px)`: whether the key was set.  The raw reply is
    OK (set) or nil (it existed) in RESP2 and RESP3, decoded or not; redis-py's SET callback
    turns these into True and None."""
    if not takes_own_connection(client):
        return bool(client.set(key, value, nx=True, px=px))
    return execute_on_own_connection(client, "SET", key, value, "NX", "PX", px) is not None


def send_packed(connection, packed: bytes) -> None:
    """Write one command packed by hiredis (tests/redis_wire.py records the commands here, as
    at redis-py's `send_command`)."""
    connection.send_packed_command([packed])


def run_script(client, text: str, sha: str, keys: Sequence[str], args: Sequence[object]):
    """EVALSHA `sha`; the script's `text` by EVAL when Redis answers NOSCRIPT (restarted,
    SCRIPT FLUSH, a cluster node new to the slot).  The same answer either way."""
    if not takes_own_connection(client):  # a cluster routes the script by its keys
        try:
            return client.evalsha(sha, len(keys), *keys, *args)
        except NoScriptError:
            return client.eval(text, len(keys), *keys, *args)
    try:
        return run_command(client, "EVALSHA", sha, len(keys), *keys, *args)
    except NoScriptError:
        return run_command(client, "EVAL", text, len(keys), *keys, *args)
