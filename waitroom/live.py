"""Queue pages over websockets: after each admission tick, one message to the room's group;
and the moment someone is admitted (a step of the tick), one message to that customer alone.

The message carries what changed (the order keys that left the queue from the front, the
entries admitted) and a per-room version (Redis INCR).  Every consumer knows its own order
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


def queue_group(room_id: int) -> str:
    return f"waitroom.{room_id}"


def customer_group(room_id: int, customer_id: int) -> str:
    """One customer's queue pages: told the moment they are admitted, without waiting for
    the tick's broadcast to everyone."""
    return f"waitroom.{room_id}.c{customer_id}"


def publish_admitted(*, room_id: int, customer_ids: list[int]) -> None:
    """Send now, one small message per admitted customer.  Unsafe inside a transaction."""
    layer = get_channel_layer()
    if layer is None or not customer_ids:
        return

    async def send_all() -> None:
        for customer_id in customer_ids:
            await layer.group_send(customer_group(room_id, customer_id), {"type": "queue.admitted"})

    async_to_sync(send_all)()


def publish_queue_moved(*, room_id: int, version: int, message: dict) -> None:
    """Send now.  Unsafe inside a transaction: call it from an on_commit callback."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(
        queue_group(room_id), {"type": "queue.moved", "version": version, **message}
    )


def publish_sold_out(*, room_id: int, stock: dict) -> None:
    """Every page of the room: sold out, here is the waitlist.  Not a move of the queue (no
    version): each page keeps its place and adds the news.  Unsafe inside a transaction."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(queue_group(room_id), {"type": "queue.sold_out", **stock})
