"""The queue's Redis index: one sorted set of WAITING entries per room, plus counters.

PostgreSQL (`QueueEntry`) is the record; this is the fast index that answers "what is my
place" in O(log n) and "who is next" for the admission tick.  Every write here happens after
the PostgreSQL transaction it mirrors has committed, and the index is rebuilt from
PostgreSQL whenever its `built` marker is missing (Redis restarted empty, evicted, flushed).

Keys, per room (all with the room's hash tag: one cluster slot): `<prefix>:{r<room>}:q`
(zset: member = zero-padded entry id, score = order key), `:pre` (zset of the pre-queue:
score = join time), `:built` (marker), `:v` (message version for the websocket), `:state`
(hash: what the last admission tick decided),
`:gone` (hash: entries admitted by a step of the tick whose removal from `:q` waits for the
tick's one broadcast; member -> order key), `:lanes` (marker: someone entered the priority
lane since the last broadcast).
Any Redis error becomes `QueueUnavailable` (HTTP 503).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from contextlib import contextmanager

import redis
from django.conf import settings

from kernel import redis_clients
from waitroom.errors import QueueUnavailable

REBUILD_BATCH = 1000


_clients: dict[tuple[str, bool], redis.Redis] = {}
_clients_lock = threading.Lock()

# The embedded mode (no REDIS_URL: web, worker and beat are threads of one process, see
# `manage.py serve`) keeps the index in an in-process Redis: fakeredis, which runs the same
# commands, MULTI pipelines and Lua scripts (with lupa), one command at a time under its
# server's lock.  It is gone when the process ends, like a Redis restarted empty: the index
# is rebuilt from the database on first use (`ensure_index`), the join limits start afresh.
IN_PROCESS_URL = "memory://"


def _new_client(url: str) -> redis.Redis:
    if url.startswith(IN_PROCESS_URL):
        import fakeredis

        return fakeredis.FakeRedis(server=fakeredis.FakeServer())
    timeout = settings.WAITING_ROOM["REDIS_TIMEOUT_SECONDS"]
    return redis_clients.connect(
        url,
        cluster=bool(settings.WAITING_ROOM.get("REDIS_CLUSTER")),
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=10,
    )


def _client_for(url: str) -> redis.Redis:
    # One client (one pool) per URL, made under a lock: a second client made by a racing
    # thread would be garbage-collected and close its pool's sockets while still in use (and
    # a second in-process server would be a second, empty queue).
    cluster = bool(settings.WAITING_ROOM.get("REDIS_CLUSTER"))
    client = _clients.get((url, cluster))
    if client is None:
        with _clients_lock:
            client = _clients.get((url, cluster))
            if client is None:
                client = _clients[(url, cluster)] = _new_client(url)
    return client


def client() -> redis.Redis:
    url = settings.WAITING_ROOM["REDIS_URL"]
    if not url:
        raise QueueUnavailable()
    try:
        return _client_for(url)
    except redis.RedisError as exc:  # a cluster none of whose nodes answer
        raise QueueUnavailable() from exc


@contextmanager
def reachable():
    """Turn any Redis failure into QueueUnavailable."""
    try:
        yield
    except redis.RedisError as exc:
        raise QueueUnavailable() from exc


def key(room_id: int, name: str) -> str:
    # The room's hash tag: each pipeline and script below touches one room's keys, one slot.
    return f"{settings.WAITING_ROOM['KEY_PREFIX']}:{redis_clients.room_tag(room_id)}:{name}"


def member(entry_id: int) -> str:
    # Zero-padded so members with equal scores sort like ids (never happens for order keys,
    # which are unique, but keeps ZRANGE deterministic).
    return f"{entry_id:012d}"


def ensure_index(room_id: int) -> None:
    """Rebuild the sorted sets from PostgreSQL if Redis lost them.  Safe to run twice or
    concurrently: ZADD of the same member and score changes nothing."""
    with reachable():
        if client().exists(key(room_id, "built")):
            return
        rebuild(room_id)


def rebuild(room_id: int) -> int:
    from waitroom.models import QueueEntry, QueueStatus

    rows = QueueEntry.objects.filter(room_id=room_id, status=QueueStatus.WAITING).values_list(
        "id", "order_key", "joined_at"
    )
    r = client()
    count = 0
    with reachable():
        pipe = r.pipeline(transaction=False)
        # The rebuilt index holds only the WAITING: removals still pending are done already.
        # One DEL per key: a cluster pipeline refuses a multi-key DEL (even in one slot).
        for name in ("q", "pre", "gone"):
            pipe.delete(key(room_id, name))
        for entry_id, order_key, joined_at in rows.iterator(chunk_size=REBUILD_BATCH):
            if order_key is None:
                pipe.zadd(key(room_id, "pre"), {member(entry_id): joined_at.timestamp()})
            else:
                pipe.zadd(key(room_id, "q"), {member(entry_id): order_key})
            count += 1
            if count % REBUILD_BATCH == 0:
                pipe.execute()
        # Versions restart above anything handed out before the index was lost (a count of
        # ticks stays far below the clock in milliseconds), so no page ignores new messages.
        pipe.set(key(room_id, "v"), int(time.time() * 1000))
        pipe.set(key(room_id, "built"), "1")
        pipe.execute()
    return count


# Rooms whose index missed a write of this process (the admission's removals): rebuilt from
# PostgreSQL before the next write that reaches Redis.  A Redis that comes back empty is
# rebuilt anyway (no `built` marker); a cluster replica promoted after its primary died is
# not empty: it holds the index as it was, marker included, minus what it never received.
_lost_writes: set[int] = set()


def note_lost_write(room_id: int) -> None:
    _lost_writes.add(room_id)


def heal(room_id: int) -> None:
    """Rebuild the index if this process lost a write to it since it was last whole."""
    if room_id in _lost_writes:
        invalidate(room_id)
        ensure_index(room_id)
        _lost_writes.discard(room_id)


def invalidate(room_id: int) -> None:
    """Make the next reader rebuild (after the shuffle rewrote every order key)."""
    with reachable():
        client().delete(key(room_id, "built"))


def add(room_id: int, entries: Iterable[tuple[int, int]]) -> None:
    """(entry id, order key) pairs into the queue, out of the pre-queue."""
    mapping = {member(entry_id): order_key for entry_id, order_key in entries}
    if not mapping:
        return
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.zadd(key(room_id, "q"), mapping)
        pipe.zrem(key(room_id, "pre"), *mapping)
        pipe.execute()


def add_pre(room_id: int, entry_id: int, joined_at: float) -> None:
    with reachable():
        client().zadd(key(room_id, "pre"), {member(entry_id): joined_at}, nx=True)


def defer_removal(room_id: int, entries: Iterable[tuple[int, int]]) -> None:
    """(entry id, order key) pairs admitted by a step of the tick: they stay in the index,
    where every waiting page's position still counts them, until the tick's broadcast
    (`remove_and_bump`) takes them out and tells the pages, all in one version."""
    mapping = {member(entry_id): order_key for entry_id, order_key in entries}
    if not mapping:
        return
    with reachable():
        client().hset(key(room_id, "gone"), mapping=mapping)


# Atomically: the deferred removals plus these, out of the queue; the version bumped.  A
# snapshot (`rank_and_version`, one MULTI) sees all of it or none, so a page never applies a
# message to a position that already includes it.  Returns {version, member, key, ...}.
_REMOVE_AND_BUMP = """
local gone = redis.call('HGETALL', KEYS[2])
redis.call('DEL', KEYS[2])
for i = 1, #ARGV, 2 do
  gone[#gone + 1] = ARGV[i]
  gone[#gone + 1] = ARGV[i + 1]
end
for i = 1, #gone, 2 do
  redis.call('ZREM', KEYS[1], gone[i])
end
local out = {redis.call('INCR', KEYS[3])}
for i = 1, #gone do
  out[#out + 1] = gone[i]
end
return out
"""


def remove_and_bump(
    room_id: int, entries: Iterable[tuple[int, int]] = ()
) -> tuple[int, list[tuple[int, int]]]:
    """Take these (entry id, order key) pairs and every deferred removal out of the queue
    and bump the version, atomically.  Returns (the new version, every pair removed)."""
    args: list = []
    for entry_id, order_key in entries:
        args += [member(entry_id), order_key]
    with reachable():
        out = client().eval(
            _REMOVE_AND_BUMP,
            3,
            key(room_id, "q"),
            key(room_id, "gone"),
            key(room_id, "v"),
            *args,
        )
    version, flat = int(out[0]), out[1:]
    removed = {int(flat[i]): int(flat[i + 1]) for i in range(0, len(flat), 2)}
    return version, sorted(removed.items(), key=lambda pair: pair[1])


def rank_and_version(room_id: int, entry_id: int) -> tuple[int | None, int]:
    """(0-based place among the waiting or None, the version it belongs to), atomically."""
    with reachable():
        pipe = client().pipeline(transaction=True)
        pipe.zrank(key(room_id, "q"), member(entry_id))
        pipe.get(key(room_id, "v"))
        rank, version = pipe.execute()
    return rank, int(version or 0)


def place(room_id: int, entry_id: int) -> tuple[int | None, int | None, int, dict | None]:
    """(0-based rank or None, order key, version, last tick's state), atomically, from Redis
    alone: the websocket's resync path, which must not queue on the database."""
    with reachable():
        pipe = client().pipeline(transaction=True)
        pipe.zrank(key(room_id, "q"), member(entry_id))
        pipe.zscore(key(room_id, "q"), member(entry_id))
        pipe.get(key(room_id, "v"))
        pipe.get(key(room_id, "state"))
        rank, score, version, state = pipe.execute()
    return (
        rank,
        None if score is None else int(score),
        int(version or 0),
        json.loads(state) if state else None,
    )


def all_places(room_id: int) -> tuple[dict[int, tuple[int, int]], int, dict | None]:
    """Every waiting entry's (0-based rank, order key), the version and the last tick's
    state, atomically, in one round trip: what a web process reads once when a broadcast
    makes all its queue pages re-read their place at the same moment (the shuffle)."""
    with reachable():
        pipe = client().pipeline(transaction=True)
        pipe.zrange(key(room_id, "q"), 0, -1, withscores=True)
        pipe.get(key(room_id, "v"))
        pipe.get(key(room_id, "state"))
        members, version, state = pipe.execute()
    places = {int(m): (rank, int(score)) for rank, (m, score) in enumerate(members)}
    return places, int(version or 0), json.loads(state) if state else None


def rank(room_id: int, entry_id: int) -> int | None:
    """0-based place among the waiting, or None."""
    with reachable():
        return client().zrank(key(room_id, "q"), member(entry_id))


def head(room_id: int, n: int) -> list[int]:
    with reachable():
        return [int(m) for m in client().zrange(key(room_id, "q"), 0, n - 1)]


def counts(room_id: int) -> tuple[int, int]:
    """(waiting in the queue, waiting in the pre-queue)."""
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.zcard(key(room_id, "q"))
        pipe.zcard(key(room_id, "pre"))
        waiting, pre = pipe.execute()
    return waiting, pre


def current_version(room_id: int) -> int:
    with reachable():
        return int(client().get(key(room_id, "v")) or 0)


def save_state(room_id: int, state: dict) -> None:
    with reachable():
        client().set(key(room_id, "state"), json.dumps(state))


def load_state(room_id: int) -> dict | None:
    with reachable():
        raw = client().get(key(room_id, "state"))
    return json.loads(raw) if raw else None


def count_attempt(scope: str, ident: str, *, limit: int, period: int = 60) -> int | None:
    """One more join attempt in this fixed window; the seconds to wait if over `limit`."""
    now = time.time()
    window = int(now // period)
    name = f"{settings.WAITING_ROOM['KEY_PREFIX']}:rl:{scope}:{ident}:{window}"
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.incr(name)
        pipe.expire(name, period + 1)
        attempts, _ = pipe.execute()
    if attempts > limit:
        return max(1, int((window + 1) * period - now) + 1)
    return None


def mark_lane_change(room_id: int) -> None:
    """A place was taken in the priority lane, ahead of general places: the next broadcast
    makes every page re-read its place."""
    with reachable():
        client().set(key(room_id, "lanes"), "1")


def take_lane_change(room_id: int) -> bool:
    with reachable():
        return bool(client().delete(key(room_id, "lanes")))


def note_challenger(room_id: int, prefix: str, customer_id: int, *, seconds: int) -> None:
    """This account of `prefix` holds an unspent proof-of-work challenge for the room."""
    name = key(room_id, f"powp:{prefix}")
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.sadd(name, customer_id)
        pipe.expire(name, seconds)
        pipe.execute()


def prefix_challengers(room_id: int, prefix: str, *, excluding: int) -> int:
    """Other accounts of `prefix` holding a challenge for the room now (or lately)."""
    name = key(room_id, f"powp:{prefix}")
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.scard(name)
        pipe.sismember(name, excluding)
        count, mine = pipe.execute()
    return count - (1 if mine else 0)


def spend_nonce(room_id: int, nonce: str, *, seconds: int) -> bool:
    """Mark a proof-of-work challenge spent; False if it was already."""
    with reachable():
        return bool(client().set(key(room_id, f"pown:{nonce}"), "1", nx=True, ex=seconds))


def count_hold_attempt(room_id: int, *, second: int, keep: int) -> int:
    """One more hold attempt on a dormant safety-net room in this second; the count."""
    name = key(room_id, f"net:{second}")
    with reachable():
        pipe = client().pipeline(transaction=False)
        pipe.incr(name)
        pipe.expire(name, keep)
        attempts, _ = pipe.execute()
    return int(attempts)
