"""Queue pages over websockets: after each admission tick, one message to the sale's group.

The message carries what changed (the order keys that left the queue from the front, the
entries admitted) and a per-sale version (Redis INCR).  Every consumer knows its own order
key, so it moves its customer's position without asking Redis; on a version gap, a
shuffle, or a reconnect it re-reads the snapshot (`room_selectors.queue_status`), which
reads the version before the rank.  Sent only after commit, and a failed send is logged,
never raised (the page recovers on its next resync or poll).
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)


def queue_group(sale_id: int) -> str:
    return f"waitroom.{sale_id}"


def publish_queue_moved(*, sale_id: int, version: int, message: dict) -> None:
    """Send now.  Unsafe inside a transaction: call it from an on_commit callback."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(
        queue_group(sale_id), {"type": "queue.moved", "version": version, **message}
    )
