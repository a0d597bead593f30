"""Live seat maps: seat changes pushed to every open seat-map page after commit.

Channel layers deliver at most once, so each message carries a per-sale version taken
from one atomic counter (Redis INCR through the cache) at send time.  A page that sees a
gap, or reconnects, reloads the catalogue's seat-map snapshot (for flights
`flights.cabin_map.seat_map_snapshot`), which reads the version *before* the seats: a
snapshot is never older than the version it claims.

Versions never go backwards, even when Redis restarts empty: a counter is born at the current
time in milliseconds (an epoch), not at 0, and counts up from there.  After a reset the new
counter starts at "now", above every version handed out before (as long as a sale saw fewer
than 1000 seat changes a second on average since its counter was born, and the web hosts'
clocks agree to within that margin), so an open page sees a jump, takes it for a gap, and
resyncs from the snapshot instead of ignoring every message until the count catches up.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import transaction

from kernel import redis_clients

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class CachedJson:
    """A catalogue's seat map (or search) as a finished response body and its weak ETag, the
    ETag carrying the sale's version below; body None: the client has it (304)."""

    body: bytes | None
    etag: str


def seat_map_group(sale_id: int) -> str:
    return f"seatmap.{sale_id}"


def _version_key(sale_id: int) -> str:
    # The sale's hash tag: read in one MGET with the seat map's meta and body (one slot).
    return f"seatmap-version:{redis_clients.sale_tag(sale_id)}"


def version_key(sale_id: int) -> str:
    """The cache key of the sale's version, for readers that fetch it with other keys."""
    return _version_key(sale_id)


def _epoch() -> int:
    """Where a new (or reset) counter starts: now, in milliseconds."""
    return time.time_ns() // 1_000_000


def _ensure_counter(key: str) -> None:
    # SET NX: of all the processes that find the counter gone, one creates it.
    cache.add(key, _epoch(), timeout=None)


def current_version(sale_id: int) -> int:
    key = _version_key(sale_id)
    version = cache.get(key)
    if version is None:
        _ensure_counter(key)
        version = cache.get(key)
    return version or 0


def _next_version(sale_id: int) -> int | None:
    """More than every version handed out before, or None if the counter is unreachable
    (pages then resync on every message, which is slower but still correct)."""
    key = _version_key(sale_id)
    _ensure_counter(key)
    try:
        return cache.incr(key)
    except ValueError:  # the key vanished between add and incr (evicted, flushed)
        _ensure_counter(key)
        return cache.incr(key)


def announce_seats_on_commit(*, sale_id: int, seats: Iterable[str], status: str) -> None:
    """Tell open seat maps that `seats` are now `status`, once the current transaction commits.

    Costs no query; a rolled-back change announces nothing.  A failed send is logged, not
    raised: the change is committed, and pages recover on their next resync.
    """
    changes = {seat_no: str(status) for seat_no in seats}
    if not changes:
        return
    transaction.on_commit(
        lambda: publish_seat_changes(sale_id=sale_id, changes=changes), robust=True
    )


def publish_seat_changes(*, sale_id: int, changes: dict[str, str]) -> int | None:
    """Send now.  Unsafe inside a transaction (it could announce a change that rolls back):
    call `announce_seats_on_commit` instead."""
    version = _next_version(sale_id)
    layer = get_channel_layer()
    if layer is None:
        return version
    async_to_sync(layer.group_send)(
        seat_map_group(sale_id),
        {"type": "seats.changed", "saleId": sale_id, "version": version, "seats": changes},
    )
    logger.debug("seat map %s v%s: %s", sale_id, version, changes)
    return version


def announce_plan_on_commit(*, sale_ids: Iterable[int]) -> None:
    """Tell the sales' seat maps that the plan itself changed (seats added, moved, re-flagged,
    re-scored: staff's seat-map editor), once the current transaction commits.

    The version moves on, so the cached seat maps (keyed by it, their ETag carrying it) are
    read anew; open pages get a `plan` message and redraw, since statuses alone cannot show
    a new seat.  Like `announce_seats_on_commit`: rolled back, nothing is announced; a failed
    send is logged, not raised."""
    for sale_id in sorted(set(sale_ids)):
        transaction.on_commit(
            lambda sale_id=sale_id: publish_plan_change(sale_id=sale_id), robust=True
        )


def publish_plan_change(*, sale_id: int) -> int | None:
    """Send now.  Unsafe inside a transaction: call `announce_plan_on_commit` instead."""
    version = _next_version(sale_id)
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(
            seat_map_group(sale_id), {"type": "plan.changed", "saleId": sale_id, "version": version}
        )
    logger.debug("seat map %s v%s: the plan changed", sale_id, version)
    return version
