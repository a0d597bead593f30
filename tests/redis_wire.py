"""What this process sends to Redis, command by command, whichever way it goes: redis-py's
`execute_command` or a thread's own connection (kernel.redis_own_connection) both end in a
connection's `send_command` (a pipeline's commands go packed together, not through it), or
in the own connection's `send_packed` when hiredis packed the command.

Only the recording thread's commands are kept: the patch is process-wide, and a thread an
earlier test left running (a server's, a pump's) may connect meanwhile.  The fresh-clone CI
of 7 Dec recorded such a connection's handshake (HELLO, CLIENT SETINFO, SELECT) between a
test's EVALSHA and EVAL."""

from __future__ import annotations

import hashlib
import threading
import uuid

import redis.connection

from kernel import redis_own_connection


def record_sent_commands(monkeypatch) -> list[str]:
    """The names of the commands this thread sends from now on (upper case), in order."""
    names: list[str] = []
    recorder = threading.get_ident()
    real = redis.connection.AbstractConnection.send_command

    def recording(connection, *args, **kwargs):
        if threading.get_ident() == recorder:
            names.append(str(args[0]).upper())
        return real(connection, *args, **kwargs)

    real_packed = redis_own_connection.send_packed

    def recording_packed(connection, packed: bytes):
        if threading.get_ident() == recorder:
            names.append(packed.split(b"\r\n", 3)[2].decode().upper())  # *N, $len, the name
        return real_packed(connection, packed)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_command", recording)
    monkeypatch.setattr(redis_own_connection, "send_packed", recording_packed)
    return names


def unknown_to_redis(text: str) -> tuple[str, str]:
    """`text` with a comment of its own at the end, and that text's SHA1: a script Redis
    has never run, so EVALSHA answers NOSCRIPT, as from a Redis that lost its scripts.  Not
    `SCRIPT FLUSH`: the script cache is the whole server's, and a flush in one test worker
    turned another worker's expected EVALSHA into EVALSHA, EVAL (the fresh-clone CI of
    b055dfd)."""
    fresh = f"{text}\n-- unknown to Redis: {uuid.uuid4().hex}\n"
    return fresh, hashlib.sha1(fresh.encode()).hexdigest()
