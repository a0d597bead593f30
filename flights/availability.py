"""Redis filters in front of the hold: cheap answers for losers, never a decision.

Two filters, each switched by a setting (`HOLD_FILTERS`), both failing open to PostgreSQL:

* **Seat gate** (`SEAT_GATE`): before the hold transaction, one `SET NX PX` per requested
  seat (all or none, in one Lua call).  A second request for a seat whose hold is being
  written, or was written in the last `SEAT_GATE_SECONDS`, gets `SeatUnavailable` without
  a transaction.  The gate is released (compare-and-delete) when the hold fails, and deleted
  when a hold is cancelled, expires or is taken over (`release_seats`).  A sold seat keeps its
  gate until the TTL: PostgreSQL would refuse it too.
* **Availability counter** (`AVAILABILITY_COUNTER`): units left per (flight, fare class),
  taken in Lua with a floor at 0 before the transaction and given back when the database
  refuses or a hold ends.  A refusal is `SoldOut` without a transaction.

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
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection
from django.db.models import F

from bookings.errors import SeatUnavailable, SoldOut
from flights.models import FareInventory, FlightStatus

logger = logging.getLogger(__name__)

# KEYS[1] counter hash {n, at}; ARGV[1] units.  -> {left after taking | -1 missing | -2 short, at}
_TAKE = """
local n = redis.call('HGET', KEYS[1], 'n')
if not n then return {-1, 0} end
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0')
local units = tonumber(ARGV[1])
n = tonumber(n)
if n < units then return {-2, at} end
redis.call('HINCRBY', KEYS[1], 'n', -units)
return {n - units, at}
"""
# Give back only to a counter that exists: HINCRBY on a missing key would create a counter
# holding just the returned units, far below the truth.
_GIVE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('HINCRBY', KEYS[1], 'n', tonumber(ARGV[1]))
end
return -1
"""
# ARGV: n, at, ttl seconds, overwrite (1/0).  A rebuild after a miss does not overwrite: of
# several processes rebuilding at once, the first wins and later takes are kept.
_SEED = """
if ARGV[4] == '0' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'n', ARGV[1], 'at', ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""
# KEYS seat gates; ARGV token, ttl ms.  All or none; returns the 1-based indexes already taken.
_GATE = """
local taken = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then table.insert(taken, i) end
end
if #taken > 0 then return taken end
for _, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1], 'PX', tonumber(ARGV[2])) end
return taken
"""
_UNGATE = """
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1
"""

COUNTER_KEY_TTL_SECONDS = 3 * 24 * 3600

_clients: dict[str, redis.Redis] = {}
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


def _client() -> redis.Redis | None:
    """The filters' Redis, or None while it is known to be down."""
    if time.monotonic() < _down_until:
        return None
    config = _config()
    url = config["REDIS_URL"]
    client = _clients.get(url)
    if client is None:
        with _clients_lock:
            client = _clients.get(url)
            if client is None:
                client = redis.Redis.from_url(
                    url,
                    socket_timeout=config["TIMEOUT_SECONDS"],
                    socket_connect_timeout=config["TIMEOUT_SECONDS"],
                )
                _clients[url] = client
    return client


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
        return client.eval(script, len(keys), *keys, *args)
    except redis.RedisError as exc:
        _redis_failed(exc)
        return None


def _prefix(flight_id: int) -> str:
    # The database name keeps a test database and a dev database on one Redis apart; the
    # {flight} hash tag keeps one flight's keys in one slot should Redis ever be a cluster.
    return f"hold:{connection.settings_dict['NAME']}:{{{flight_id}}}"


def counter_key(flight_id: int, fare_class: str) -> str:
    return f"{_prefix(flight_id)}:left:{fare_class}"


def gate_key(flight_id: int, seat_no: str) -> str:
    return f"{_prefix(flight_id)}:seat:{seat_no}"


def _now_ms() -> int:
    return int(time.time() * 1000)


# --- the seat gate -----------------------------------------------------------------------------


def _enter_gate(flight_id: int, seat_nos: Sequence[str]) -> str | None:
    """Gate `seat_nos`; the token to release them with, None if the gate is off or down."""
    if not seat_nos or not gate_enabled():
        return None
    token = uuid.uuid4().hex
    keys = [gate_key(flight_id, s) for s in seat_nos]
    # Never longer than a hold lives: a gate must not outlast the hold it stands for.
    seconds = min(_config()["SEAT_GATE_SECONDS"], settings.SEATKEEPER["HOLD_TTL"].total_seconds())
    ttl_ms = max(int(seconds * 1000), 1)
    taken = _run(_GATE, keys, [token, ttl_ms])
    if taken is None:
        return None
    if taken:
        raise SeatUnavailable([seat_nos[i - 1] for i in taken])
    return token


def _leave_gate(flight_id: int, seat_nos: Sequence[str], token: str) -> None:
    _run(_UNGATE, [gate_key(flight_id, s) for s in seat_nos], [token])


def release_seats(*, flight_id: int, seat_nos: Iterable[str]) -> None:
    """Open the gate of seats that are AVAILABLE again (cancel, expiry, takeover).

    Called inside the releasing transaction: opening early only lets a request through to
    PostgreSQL, which waits for the seat lock and decides."""
    keys = [gate_key(flight_id, s) for s in seat_nos]
    if not keys or not gate_enabled():
        return
    client = _client()
    if client is None:
        return
    try:
        client.delete(*keys)
    except redis.RedisError as exc:
        _redis_failed(exc)


# --- the availability counter ------------------------------------------------------------------


def _available_in_db(flight_id: int, fare_class: str) -> int | None:
    row = (
        FareInventory.objects.filter(flight_id=flight_id, fare_class=fare_class)
        .annotate(left=F("capacity") + F("overbook_limit") - F("sold") - F("held"))
        .values_list("left", flat=True)
        .first()
    )
    return None if row is None else max(row, 0)


def seed_counter(
    *, flight_id: int, fare_class: str, available: int, overwrite: bool = True
) -> None:
    """Set the counter to `available` (a figure just read from, or written to, PostgreSQL)."""
    if counter_enabled():
        _run(
            _SEED,
            [counter_key(flight_id, fare_class)],
            [available, _now_ms(), COUNTER_KEY_TTL_SECONDS, int(overwrite)],
        )


def rebuild_counter(*, flight_id: int, fare_class: str, overwrite: bool = True) -> int | None:
    """Read units left from PostgreSQL and store them; returns them (None: no such fare)."""
    available = _available_in_db(flight_id, fare_class)
    if available is not None:
        seed_counter(
            flight_id=flight_id, fare_class=fare_class, available=available, overwrite=overwrite
        )
    return available


def rebuild_open_counters() -> int:
    """Beat: rebuild every counter of a flight still on sale from PostgreSQL, in one read and
    one pipeline.  Corrects any drift (lost give-backs, waitlist offers, crashed workers)."""
    if not counter_enabled():
        return 0
    from django.utils import timezone

    rows = list(
        FareInventory.objects.filter(
            flight__status=FlightStatus.SCHEDULED, flight__departure_at__gt=timezone.now()
        )
        .annotate(left=F("capacity") + F("overbook_limit") - F("sold") - F("held"))
        .values_list("flight_id", "fare_class", "left")
    )
    client = _client()
    if client is None or not rows:
        return 0
    now = _now_ms()
    try:
        pipe = client.pipeline(transaction=False)
        for flight_id, fare_class, left in rows:
            key = counter_key(flight_id, fare_class)
            pipe.hset(key, mapping={"n": max(left, 0), "at": now})
            pipe.expire(key, COUNTER_KEY_TTL_SECONDS)
        pipe.execute()
    except redis.RedisError as exc:
        _redis_failed(exc)
        return 0
    return len(rows)


def counter_value(*, flight_id: int, fare_class: str) -> int | None:
    """Units left per the counter (None: missing or Redis unreachable) — for audits and tests."""
    client = _client()
    if client is None:
        return None
    try:
        value = client.hget(counter_key(flight_id, fare_class), "n")
    except redis.RedisError as exc:
        _redis_failed(exc)
        return None
    return None if value is None else int(value)


def give_back(*, flight_id: int, fare_class: str, units: int) -> None:
    """Units returned to the fare class (a failed hold, a cancel, an expiry, an unblocked seat).

    Inside the releasing transaction, for the same reason as `release_seats`: a counter that
    is briefly too high only sends a request to PostgreSQL."""
    if units > 0 and counter_enabled():
        _run(_GIVE, [counter_key(flight_id, fare_class)], [units])


def _take(flight_id: int, fare_class: str, units: int) -> bool | None:
    """True: taken; False: refused (sold out per the counter); None: not filtered."""
    key = counter_key(flight_id, fare_class)
    result = _run(_TAKE, [key], [units])
    if result is None:
        return None
    left, at = int(result[0]), int(result[1])
    if left == -1:  # missing (Redis restarted empty, flight created while Redis was down)
        if rebuild_counter(flight_id=flight_id, fare_class=fare_class, overwrite=False) is None:
            return None  # no such fare class: let the hold report it
        result = _run(_TAKE, [key], [units])
        if result is None:
            return None
        left, at = int(result[0]), int(result[1])
        if left == -1:
            return None
    if left >= 0:
        return True
    trust_ms = _config()["COUNTER_TRUST_SECONDS"] * 1000
    if _now_ms() - at <= trust_ms or not _claim_rebuild(key):
        return False
    # The counter refuses and is older than we trust: check with PostgreSQL once.
    rebuild_counter(flight_id=flight_id, fare_class=fare_class)
    result = _run(_TAKE, [key], [units])
    return None if result is None else int(result[0]) >= 0


def _claim_rebuild(key: str) -> bool:
    """One sanity rebuild per counter per trust period, however many losers see it stale."""
    client = _client()
    if client is None:
        return False
    ttl_ms = max(int(_config()["COUNTER_TRUST_SECONDS"] * 1000), 100)
    try:
        return bool(client.set(f"{key}:rebuilding", 1, nx=True, px=ttl_ms))
    except redis.RedisError as exc:
        _redis_failed(exc)
        return False


# --- the hold's entry ----------------------------------------------------------------------------


@dataclass
class Admission:
    flight_id: int
    fare_class: str
    units: int
    seat_nos: Sequence[str]
    gate_token: str | None = None
    units_taken: bool = False


@contextmanager
def hold_admission(
    *, flight_id: int, fare_class: str, units: int, seat_nos: Sequence[str] = ()
) -> Iterator[Admission]:
    """Run a hold behind the filters.  Refuses early with `SeatUnavailable` / `SoldOut`;
    whatever the body raises gives back what the filters took."""
    admission = Admission(flight_id, fare_class, units, seat_nos)
    admission.gate_token = _enter_gate(flight_id, seat_nos)
    try:
        if counter_enabled():
            taken = _take(flight_id, fare_class, units)
            if taken is False:
                raise SoldOut(fare_class)
            admission.units_taken = bool(taken)
        yield admission
    except BaseException as exc:
        if admission.units_taken:
            give_back(flight_id=flight_id, fare_class=fare_class, units=units)
            if isinstance(exc, SoldOut):
                # The counter let through what PostgreSQL refused: it is too high.  Correct it
                # now (at most once per trust period) so the next losers stay cheap.
                key = counter_key(flight_id, fare_class)
                if _claim_rebuild(key):
                    rebuild_counter(flight_id=flight_id, fare_class=fare_class)
        if admission.gate_token:
            _leave_gate(flight_id, seat_nos, admission.gate_token)
        raise
