"""Live seat maps: seat changes pushed to every open seat-map page after commit.

Channel layers deliver at most once, so each message carries a per-flight version taken
from one atomic counter (Redis INCR through the cache) at send time.  A page that sees a
gap, or reconnects, reloads the snapshot from `flights.selectors.seat_map_snapshot`, which
reads the version *before* the seats: a snapshot is never older than the version it claims.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import transaction

logger = logging.getLogger(__name__)


def seat_map_group(flight_id: int) -> str:
    return f"seatmap.{flight_id}"


def _version_key(flight_id: int) -> str:
    return f"seatmap-version:{flight_id}"


def version_key(flight_id: int) -> str:
    """The cache key of the flight's version, for readers that fetch it with other keys."""
    return _version_key(flight_id)


def current_version(flight_id: int) -> int:
    return cache.get(_version_key(flight_id)) or 0


def _next_version(flight_id: int) -> int | None:
    """One more than every version handed out before, or None if the counter is unreachable
    (pages then resync on every message, which is slower but still correct)."""
    key = _version_key(flight_id)
    cache.add(key, 0, timeout=None)
    try:
        return cache.incr(key)
    except ValueError:  # the key vanished between add and incr (evicted, flushed)
        cache.add(key, 0, timeout=None)
        return cache.incr(key)


def announce_seats_on_commit(*, flight_id: int, seats: Iterable[str], status: str) -> None:
    """Tell open seat maps that `seats` are now `status`, once the current transaction commits.

    Costs no query; a rolled-back change announces nothing.  A failed send is logged, not
    raised: the change is committed, and pages recover on their next resync.
    """
    changes = {seat_no: str(status) for seat_no in seats}
    if not changes:
        return
    transaction.on_commit(
        lambda: publish_seat_changes(flight_id=flight_id, changes=changes), robust=True
    )


def publish_seat_changes(*, flight_id: int, changes: dict[str, str]) -> int | None:
    """Send now.  Unsafe inside a transaction (it could announce a change that rolls back):
    call `announce_seats_on_commit` instead."""
    version = _next_version(flight_id)
    layer = get_channel_layer()
    if layer is None:
        return version
    async_to_sync(layer.group_send)(
        seat_map_group(flight_id),
        {"type": "seats.changed", "flightId": flight_id, "version": version, "seats": changes},
    )
    logger.debug("seat map %s v%s: %s", flight_id, version, changes)
    return version
