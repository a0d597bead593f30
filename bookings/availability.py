"""Redis filters in front of the hold: cheap answers for losers, never a decision.

Two filters, each switched by a setting (`HOLD_FILTERS`), both failing open to PostgreSQL:

* **Seat gate** (`SEAT_GATE`): before the hold transaction, one `SET NX PX` per requested
  seat (all or none, in one Lua call).  A second request for a seat whose hold is being
  written, or was written in the last `SEAT_GATE_SECONDS`, gets `SeatUnavailable` without
  a transaction.  The gate is released (compare-and-delete) when the hold fails, and deleted
  when a hold is cancelled, expires or is taken over (`release_seats`).  A sold seat keeps its
  gate until the TTL: PostgreSQL would refuse it too.
* **Availability counter** (`AVAILABILITY_COUNTER`): units left per (sale, inventory class),
  taken in Lua with a floor at 0 before the transaction (and counted as *pending* until the
  hold commits), given back when the database refuses or a hold ends (cancel, expiry), not
  moved by a sale, rebuilt when staff change limits.  It answers `SoldOut` without a
  transaction only when it is short *and no hold is pending*: a running hold may still fail
  and return its units, and refusing meanwhile would refuse what PostgreSQL would sell.

Why a wrong filter can never oversell: PostgreSQL still runs the full hold (seat locks, the
conditional inventory UPDATE, the CHECK constraints); a filter can only *refuse early*.
Why it cannot keep refusing what PostgreSQL would sell: every error path gives back or
releases; give-backs happen as soon as the units return (erring high, which is harmless);
a counter is rebuilt from PostgreSQL when it is missing, by beat every few seconds, and
whenever it refuses while its last rebuild is older than `COUNTER_TRUST_SECONDS`; a gate
lives `SEAT_GATE_SECONDS` at most.  So a counter that drifted low (a lost give-back while
Redis was down, a crashed worker) refuses for at most `COUNTER_TRUST_SECONDS`.

Any Redis error turns the filters off for this process for `BACKOFF_SECONDS` and the hold
goes straight to PostgreSQL, exactly as without filters.

This module holds the filters' Redis connection, the seat gate and the hold's entry
(`hold_admission`); the counter's upkeep (seed, rebuild, read, give back) is
bookings.availability_counter, whose names are importable from here too.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import redis
from django.conf import settings
from django.db import connection
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException
from redis.retry import Retry

from bookings import admission_reads
from bookings import availability_scripts as scripts
from bookings.errors import BookingClassSoldOut, SeatUnavailable, SoldOut
from kernel import redis_clients, redis_own_connection

logger = logging.getLogger(__name__)

COUNTER_KEY_TTL_SECONDS = 3 * 24 * 3600

_clients: dict[tuple[str, bool], redis.Redis] = {}
_clients_lock = threading.Lock()
_down_until = 0.0


def _config() -> dict:
    return settings.HOLD_FILTERS


def gate_enabled() -> bool:
    config = _config()
    return bool(config["SEAT_GATE"] and config["REDIS_URL"])


def counter_enabled() -> bool:
    config = _config()
    return bool(config["AVAILABILITY_COUNTER"] and config["REDIS_URL"])


def filters_client() -> redis.Redis | None:
    """The hold filters' Redis client, when either filter is on and Redis is up (a web
    process's start opens its connections ahead: config/warmup.py)."""
    if not (gate_enabled() or counter_enabled()):
        return None
    return _client()


def _client() -> redis.Redis | None:
    """The filters' Redis, or None while it is known to be down."""
    if time.monotonic() < _down_until:
        return None
    config = _config()
    url, cluster = config["REDIS_URL"], bool(config.get("REDIS_CLUSTER"))
    client = _clients.get((url, cluster))
    if client is None:
        with _clients_lock:
            client = _clients.get((url, cluster))
            if client is None:
                try:
                    client = _connect(url, cluster, config)
                except redis.RedisError as exc:  # a cluster none of whose nodes answer
                    _redis_failed(exc)
                    return None
                _clients[(url, cluster)] = client
    return client


def _connect(url: str, cluster: bool, config: dict) -> redis.Redis:
    return redis_clients.connect(
        url,
        cluster=cluster,
        socket_timeout=config["TIMEOUT_SECONDS"],
        socket_connect_timeout=config["TIMEOUT_SECONDS"],
        # A filter does not retry: PostgreSQL answers instead.  (A cluster
        # client still re-reads its slot map after the error, for the next call.)
        retry=Retry(NoBackoff(), 0),
    )


def _redis_failed(exc: Exception) -> None:
    global _down_until
    if time.monotonic() >= _down_until:
        logger.warning("hold filters off for a moment, Redis failed: %s", exc)
    _down_until = time.monotonic() + _config()["BACKOFF_SECONDS"]


def _run(script: str, keys: Sequence[str], args: Sequence[object]):
    """Run a Lua script; None when Redis is unreachable (the caller then fails open)."""
    client = _client()
    if client is None:
        return None
    try:
        return _by_sha(client, script, scripts.sha(script), keys, args)
    except redis.RedisError as exc:
        _redis_failed(exc)
        return None


def _by_sha(client, text: str, sha: str, keys: Sequence[str], args: Sequence[object]):
    """EVALSHA: Redis runs the script it keeps by its SHA1, and the request carries 40 bytes,
    not the script (each hold's settle and each gate's release, issue 26).  A Redis that lost
    its scripts (restarted, SCRIPT FLUSH, a cluster node new to this slot) answers NOSCRIPT:
    EVAL runs the text and caches it again.  On a single server, on the thread's own
    connection (kernel.redis_own_connection: no retry, which the filters never had)."""
    return redis_own_connection.run_script(client, text, sha, keys, args)


def _run_with_rider(script: str, keys: Sequence[str], args: Sequence[object], *, undo):
    """`_run`, with the request's rider (bookings.admission_reads) in the same round trip:
    its keys read in the same round trip as the script (one script on one Redis, a pipeline
    on a cluster), and its judge asked before the caller acts on the answer.  If the judge
    refuses, `undo(answer)` gives back what the script took.  On a cluster the pipeline is
    one round trip per node its keys are on.  With Redis
    down the judge reads for itself first."""
    rider = admission_reads.pending()
    if rider is None:
        return _run(script, keys, args)
    client = _client()
    if client is None:
        rider.decide(None)
        return _run(script, keys, args)
    try:
        if _config().get("REDIS_CLUSTER"):
            pipe = client.pipeline(transaction=False)
            for key in rider.keys:
                pipe.get(key)
            # EVAL by name: redis-py's ClusterPipeline has no `eval`, though it routes EVAL
            # by its keys like any command.
            pipe.execute_command("EVAL", script, len(keys), *keys, *args)
            replies = pipe.execute()
        else:
            replies = _run_riding(client, script, [*rider.keys, *keys], [len(rider.keys), *args])
    except (redis.RedisError, RedisClusterException) as exc:
        _redis_failed(exc)
        rider.decide(None)
        return None
    answer = replies[-1]
    try:
        rider.decide(list(replies[:-1]))
    except BaseException:
        undo(answer)
        raise
    return answer


def _run_riding(client: redis.Redis, script: str, keys: list[str], args: list[object]) -> list:
    """One Redis: the rider's reads and the script as one command (`scripts.riding`)."""
    text, sha = scripts.riding(script)
    return _by_sha(client, text, sha, keys, args)


def _prefix(sale_id: int) -> str:
    # The database name keeps a test database and a dev database on one Redis apart; the
    # {sale} hash tag keeps one sale's keys in one slot, so each script runs on a cluster.
    return f"hold:{connection.settings_dict['NAME']}:{redis_clients.sale_tag(sale_id)}"


def counter_key(sale_id: int, fare_class: str) -> str:
    return f"{_prefix(sale_id)}:left:{fare_class}"


def gate_key(sale_id: int, seat_no: str) -> str:
    return f"{_prefix(sale_id)}:seat:{seat_no}"


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- the seat gate -----------------------------------------------------------------------------


def _enter_gate(sale_id: int, seat_nos: Sequence[str]) -> str | None:
    """Gate `seat_nos`; the token to release them with, None if the gate is off or down."""
    if not seat_nos or not gate_enabled():
        return None
    token = uuid.uuid4().hex
    keys = [gate_key(sale_id, s) for s in seat_nos]
    # Never longer than a hold lives: a gate must not outlast the hold it stands for.
    seconds = min(_config()["SEAT_GATE_SECONDS"], settings.SEATKEEPER["HOLD_TTL"].total_seconds())
    ttl_ms = max(int(seconds * 1000), 1)
    taken = _run_with_rider(
        scripts.GATE,
        keys,
        [token, ttl_ms],
        undo=lambda taken: None if taken else _leave_gate(sale_id, seat_nos, token),
    )
    if taken is None:
        return None
    if taken:
        raise SeatUnavailable([seat_nos[i - 1] for i in taken])
    return token


def _leave_gate(sale_id: int, seat_nos: Sequence[str], token: str) -> None:
    _run(scripts.UNGATE, [gate_key(sale_id, s) for s in seat_nos], [token])


def release_seats(*, sale_id: int, seat_nos: Iterable[str]) -> None:
    """Open the gate of seats that are AVAILABLE again (cancel, expiry, takeover).

    Called inside the releasing transaction: opening early only lets a request through to
    PostgreSQL, which waits for the seat lock and decides."""
    keys = [gate_key(sale_id, s) for s in seat_nos]
    if not keys or not gate_enabled():
        return
    client = _client()
    if client is None:
        return
    try:
        client.delete(*keys)
    except redis.RedisError as exc:
        _redis_failed(exc)


class Take:
    TAKEN = "taken"  # n went down and the units are pending until the hold ends
    REFUSED = "refused"  # sold out per the counter: answer SoldOut
    THROUGH = "through"  # not filtered (Redis down, short but unsure): PostgreSQL decides


def _take(sale_id: int, fare_class: str, units: int) -> str:
    key = counter_key(sale_id, fare_class)

    def give_back_taken(result) -> None:
        if result is not None and int(result[0]) == 1:
            _settle(sale_id, fare_class, units, give=True, pending=True)

    result = _run_with_rider(scripts.TAKE, [key], [units], undo=give_back_taken)
    if result is None:
        return Take.THROUGH
    if int(result[0]) == -1:  # missing (Redis restarted empty, sale created while it was down)
        if rebuild_counter(sale_id=sale_id, fare_class=fare_class, overwrite=False) is None:
            return Take.THROUGH  # no such fare class: let the hold report it
        result = _run(scripts.TAKE, [key], [units])
        if result is None or int(result[0]) == -1:
            return Take.THROUGH
    if int(result[0]) == 1:
        return Take.TAKEN
    at, pending = int(result[1]), int(result[2])
    if pending > 0:
        return Take.THROUGH  # a running hold may still give units back
    if _now_ms() - at <= _config()["COUNTER_TRUST_SECONDS"] * 1000:
        return Take.REFUSED
    # Short, and older than we trust: check with PostgreSQL.  One process rebuilds; the
    # others go through to PostgreSQL meanwhile rather than refuse on a figure nobody checked.
    if not _claim_rebuild(key):
        return Take.THROUGH
    rebuild_counter(sale_id=sale_id, fare_class=fare_class)
    result = _run(scripts.TAKE, [key], [units])
    if result is None or int(result[0]) == -1:
        return Take.THROUGH
    return Take.TAKEN if int(result[0]) == 1 else Take.REFUSED


def _claim_rebuild(key: str) -> bool:
    """One rebuild at a time per counter, however many requests find it stale at once."""
    client = _client()
    if client is None:
        return False
    try:
        return bool(client.set(f"{key}:rebuilding", 1, nx=True, px=1000))
    except redis.RedisError as exc:
        _redis_failed(exc)
        return False


# --- the hold's entry ----------------------------------------------------------------------------


@contextmanager
def hold_admission(
    *,
    sale_id: int,
    fare_class: str,
    units: int,
    seat_nos: Sequence[str] = (),
    booking_class: str = "",
) -> Iterator[None]:
    """Run a hold (the body: its whole transaction) behind the filters.

    Refuses early with `SeatUnavailable` / `SoldOut` (`BookingClassSoldOut` when a nested
    booking class's own counter is short: its losers never reach the fare class's counter).
    If the body raises, whatever the filters took is given back; if it returns, the hold is
    committed and its units stop being pending.  The request's rider, if any
    (bookings.admission_reads), is judged with the first script, before the body runs.
    """
    gate_token = _enter_gate(sale_id, seat_nos)
    names = [counter_name(fare_class, booking_class)] + ([fare_class] if booking_class else [])
    taken: list[tuple[str, str]] = []
    try:
        if counter_enabled():
            for name in names:
                take = _take(sale_id, name, units)
                if take == Take.REFUSED:
                    if "/" in name:
                        raise BookingClassSoldOut(fare_class, booking_class, sale_id=sale_id)
                    raise SoldOut(fare_class, sale_id=sale_id)
                taken.append((name, take))
        rider = admission_reads.pending()
        if rider is not None:  # nothing went to Redis for it to ride with
            rider.decide(None)
        yield
    except BaseException as exc:
        for name, take in taken:
            if take == Take.TAKEN:
                _settle(sale_id, name, units, give=True, pending=True)
        _correct_after_refusal(sale_id, exc, taken, fare_class, booking_class)
        if gate_token:
            _leave_gate(sale_id, seat_nos, gate_token)
        raise
    for name, take in taken:
        if take == Take.TAKEN:
            _settle(sale_id, name, units, pending=True)
        elif take == Take.THROUGH:
            _settle(sale_id, name, units, take=True)


def _correct_after_refusal(
    sale_id: int, exc: BaseException, taken: list[tuple[str, str]], fare_class: str, code: str
) -> None:
    """The counter let through what PostgreSQL refused as sold out: it is too high.  Correct
    it now so the next losers stay cheap."""
    if not isinstance(exc, SoldOut) or not taken or not counter_enabled():
        return
    name = counter_name(fare_class, code) if isinstance(exc, BookingClassSoldOut) else fare_class
    if name in dict(taken) and _claim_rebuild(counter_key(sale_id, name)):
        rebuild_counter(sale_id=sale_id, fare_class=name)


# The counter's upkeep (seed, rebuild, read, give back) has its own module; it uses this
# module's Redis connection, so it is imported last, and its names stay importable from here.
from bookings.availability_counter import (  # noqa: E402, F401
    _settle,
    counter_name,
    counter_value,
    give_back,
    rebuild_class_counters,
    rebuild_counter,
    rebuild_open_counters,
    seed_counter,
)
