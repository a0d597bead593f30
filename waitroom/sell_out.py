"""The truth about stock: a room whose sale has sold every unit (none left, none held)
closes its queue to new joins and tells every waiting page at once, over the websocket,
offering the waitlist; those already in the queue keep their place (docs/architecture.md,
"Waiting room", "Sold out").

Two paths reach it: the outbox consumer of `booking.confirmed` (the relay is kicked when the
sale commits, so pages hear within a second, not at the next tick), and every admission
step, which also reopens the queue if units came back that the waitlist did not take.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from waitroom import live, room_selectors
from waitroom.models import StockState, WaitingRoom


def close_queue_if_sold_out(*, room_id: int, now: datetime | None = None) -> bool:
    """Mark the room sold out if its sale is, and push the news to every waiting page after
    commit.  A conditional update: of two callers at once exactly one wins and pushes.
    Returns whether this call closed the queue."""
    now = now or timezone.now()
    with transaction.atomic():
        room = WaitingRoom.objects.filter(pk=room_id).first()
        if room is None:
            return False
        inventory = room_selectors.inventory_of(room=room)
        if room_selectors.stock_state(inventory) != StockState.SOLD_OUT:
            return False
        won = bool(
            WaitingRoom.objects.filter(pk=room_id, sold_out_at__isnull=True).update(sold_out_at=now)
        )
        if won:
            facts = room_selectors.stock_facts(inventory, at=now)
            transaction.on_commit(
                lambda: live.publish_sold_out(room_id=room_id, stock=facts), robust=True
            )
    return won


def follow_stock(*, room: WaitingRoom, state: StockState, now: datetime) -> bool:
    """Under the admission step's lock on `room`: close the queue on a sell-out the outbox
    path has not marked yet, reopen it when units came back.  Returns whether it just
    closed (the caller pushes after commit).  The caller saves `sold_out_at`."""
    if state == StockState.SOLD_OUT and room.sold_out_at is None:
        room.sold_out_at = now
        return True
    if state != StockState.SOLD_OUT and room.sold_out_at is not None:
        room.sold_out_at = None
    return False
