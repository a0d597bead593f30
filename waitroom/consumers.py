"""The queue page's websocket: your place, moved live after every admission tick.

Thin: the snapshot comes from `room_selectors.queue_status`, the wording from
`room_selectors.describe_place`.  Each tick's message lists the order keys that left from
the front, so a consumer moves its customer's position without asking Redis; a version gap,
a shuffle, the pre-queue, or the customer's own admission make it re-read the snapshot.
The customer's own admission also comes at once on their own group (`queue.admitted`).
"""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth import get_user_model

from waitroom import queue, room_selectors, socket_tickets
from waitroom.errors import QueueUnavailable
from waitroom.live import customer_group, queue_group
from waitroom.models import WaitingRoom


@database_sync_to_async
def _snapshot(room_id: int, customer_id: int) -> dict | None:
    room = WaitingRoom.objects.filter(pk=room_id).first()
    if room is None:
        return None
    try:
        return room_selectors.queue_status(room=room, customer_id=customer_id)
    except QueueUnavailable:
        return {"saleId": room_id, "status": "UNAVAILABLE"}  # the wire's name for the room


@database_sync_to_async
def _active_customer(customer_id: int) -> int | None:
    found = get_user_model().objects.filter(pk=customer_id, is_active=True)
    return customer_id if found.exists() else None


async def _customer_of(scope: dict, room_id: int) -> int | None:
    """Who is connecting: the account a ticket names (token clients, see
    `waitroom.socket_tickets`), else the browser session's user; None for nobody.  A ticket
    that is present but invalid refuses the handshake rather than falling back to the session."""
    ticket = socket_tickets.ticket_in(scope)
    if ticket is not None:
        customer_id = socket_tickets.customer_of_ticket(ticket, room_id=room_id)
        return None if customer_id is None else await _active_customer(customer_id)
    user = scope.get("user")
    return user.pk if user is not None and user.is_authenticated else None


def _from_redis(read, *args) -> tuple | None:
    """A read of the queue's Redis index, in a worker thread; None while Redis is down."""
    try:
        return read(*args)
    except QueueUnavailable:
        return None


# (room, broadcast version) -> this process's one read of the whole queue for it, kept a
# few seconds for the pages whose copy of the broadcast arrives late.
_shared_reads: dict[tuple[int, int], asyncio.Future] = {}
SHARED_READ_SECONDS = 10


async def _places_after(room_id: int, version: int) -> tuple | None:
    """Every waiting place, read once per web process for a broadcast that moves every
    page in ways it cannot work out alone (the shuffle: all pre-queue pages at once).
    One read per page was 1,000 Redis round trips and thread hops per process in the same
    instant as the first admitted shoppers' holds, which then waited behind them (the
    slowest holds of scenario (w), docs/performance.md)."""
    shared = _shared_reads.get((room_id, version))
    if shared is None:
        shared = asyncio.ensure_future(
            sync_to_async(_from_redis, thread_sensitive=False)(queue.all_places, room_id)
        )
        _shared_reads[(room_id, version)] = shared
        asyncio.get_running_loop().call_later(
            SHARED_READ_SECONDS, _shared_reads.pop, (room_id, version), None
        )
    # Shielded: a page that disconnects while waiting must not cancel the others' read.
    return await asyncio.shield(shared)


class QueueConsumer(AsyncJsonWebsocketConsumer):
    group: str | None = None
    own_group: str | None = None
    snapshot: dict | None = None

    async def dispatch(self, message: dict) -> None:
        # Channels closes stale database connections before every handler, a hop onto the
        # one thread that runs ORM code: at a tick, one per waiting page (1,000 per web
        # process), queued ahead of handshakes and admissions, for handlers that mostly never
        # touch the database (a fifth of the web processes' sampled CPU in a 2,000-wide
        # sale, docs/performance.md).  Every query here goes through `database_sync_to_async`,
        # which closes stale connections itself, before and after.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        self.room_id = int(self.scope["url_route"]["kwargs"]["room_id"])
        customer_id = await _customer_of(self.scope, self.room_id)
        if customer_id is None:
            await self.close()  # before accept: the handshake is refused with 403
            return
        self.customer_id = customer_id
        # Join the group before the snapshot: a tick in between arrives as a message whose
        # version the snapshot already covers (ignored) or follows (applied).
        self.group = queue_group(self.room_id)
        self.own_group = customer_group(self.room_id, self.customer_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.channel_layer.group_add(self.own_group, self.channel_name)
        snapshot = await _snapshot(self.room_id, self.customer_id)
        if snapshot is None:
            await self._leave_groups()
            await self.close()
            return
        await self.accept()
        await self._send(snapshot)

    async def disconnect(self, code: int) -> None:
        await self._leave_groups()

    async def _leave_groups(self) -> None:
        for group in (self.group, self.own_group):
            if group:
                await self.channel_layer.group_discard(group, self.channel_name)
        self.group = self.own_group = None

    async def receive_json(self, content, **kwargs) -> None:
        if isinstance(content, dict) and content.get("type") == "resync":
            await self._resync()

    async def _send(self, snapshot: dict) -> None:
        self.snapshot = snapshot
        await self.send_json({"type": "status", **snapshot})

    async def _resync(self, *, shared_version: int | None = None) -> bool:
        """Re-reads this page's place; returns whether the page was sent something."""
        mine = self.snapshot or {}
        if mine.get("entryId") and mine.get("status") in ("WAITING", "PREQUEUE"):
            # Still waiting: Redis alone has the answer, in a worker thread; the database
            # (one thread for all consumers) is kept for handshakes, admissions and holds.
            if shared_version is None:
                place = await self._own_place(mine["entryId"])
            else:
                place = await self._shared_place(mine["entryId"], shared_version)
            if place is not None:
                rank, order_key, version, state = place
                await self._send(
                    room_selectors.newer_stock(
                        mine,
                        {
                            **mine,
                            "orderKey": order_key,
                            **room_selectors.describe_place(position=rank + 1, state=state),
                            "version": version,
                        },
                    )
                )
                return True
        # Not waiting any more (admitted, left), or Redis is down: the full snapshot.
        snapshot = await _snapshot(self.room_id, self.customer_id)
        if snapshot is None:
            return False
        await self._send(snapshot)
        return True

    async def _own_place(self, entry_id: int) -> tuple | None:
        place = await sync_to_async(_from_redis, thread_sensitive=False)(
            queue.place, self.room_id, entry_id
        )
        return place if place is not None and place[0] is not None else None

    async def _shared_place(self, entry_id: int, broadcast_version: int) -> tuple | None:
        everyone = await _places_after(self.room_id, broadcast_version)
        if everyone is None:
            return None
        places, version, state = everyone
        place = places.get(entry_id)
        return None if place is None else (*place, version, state)

    async def queue_moved(self, event: dict) -> None:
        """A tick's move.  The step that sold out sends its news on its move (`soldOut`,
        the stock facts), one message per page instead of two: at 2,000 pages the second
        message's handlers and sends interleaved with the first's and made the last page
        hear the sell-out late (docs/performance.md, "Sold out reaches the waiting pages").
        The news is kept even when the move is not (a snapshot that already has the tick's
        version may have read the room just before the step closed it)."""
        closing = self._close_queue(event["soldOut"]) if "soldOut" in event else False
        if not await self._move(event) and closing:
            await self._send(self.snapshot)

    async def _move(self, event: dict) -> bool:
        """Applies a tick's move; returns whether the page was sent something."""
        mine = self.snapshot or {}
        status, version = mine.get("status"), mine.get("version")
        if status in ("ADMITTED", "EXPIRED"):
            return False  # nothing in the queue concerns them any more
        if version is not None and event["version"] <= version:
            return False  # the snapshot already includes this tick
        if event.get("resync") or status == "PREQUEUE":
            # Every page of the room re-reads at once: one read per process serves them all.
            return await self._resync(shared_version=event["version"])
        if (
            status != "WAITING"
            or version is None
            or event["version"] != version + 1
            or mine.get("entryId") in event["admitted"]
        ):
            return await self._resync()
        ahead_removed = sum(1 for key in event["removed"] if key < mine["orderKey"])
        position = mine["position"] - ahead_removed
        await self._send(
            room_selectors.newer_stock(
                mine,
                {
                    **mine,
                    **room_selectors.describe_place(position=position, state=event["state"]),
                    "version": event["version"],
                },
            )
        )
        return True

    async def queue_sold_out(self, event: dict) -> None:
        """Every unit sold: the page says so and offers the waitlist; the place is kept.
        No database, no Redis: the message carries the news."""
        if self._close_queue(event):
            await self._send(self.snapshot)

    def _close_queue(self, stock: dict) -> bool:
        """Sold out, into this page's copy (not sent yet); False for a page it does not
        concern (not waiting, or not in the queue)."""
        mine = self.snapshot or {}
        if mine.get("status") in (None, "ADMITTED", "EXPIRED", "NOT_JOINED"):
            return False
        facts = {name: stock[name] for name in room_selectors.STOCK_FIELDS if name in stock}
        self.snapshot = {**mine, **facts, "queueClosed": True, "unlikely": True}
        return True

    async def queue_admitted(self, event: dict) -> None:
        """This customer was just admitted (a step of the tick): the token is read now,
        not at the tick's broadcast."""
        if (self.snapshot or {}).get("status") == "ADMITTED":
            return
        snapshot = await _snapshot(self.room_id, self.customer_id)
        if snapshot is not None:
            await self._send(snapshot)
