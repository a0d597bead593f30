"""Issue 30, item 5, the truth about stock: queued customers see the units PostgreSQL says
are left; "all held for now" is told apart from "sold out"; at the sell-out every waiting
page hears it over the websocket (without waiting for a tick), the queue closes to new
joins, and those in it keep their place and may join the waitlist."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.db import transaction
from django.utils import timezone

from bookings.customer_holds import hold_seatless
from bookings.lifecycle import cancel_hold, sell_held_booking
from bookings.models import Booking
from kernel.outbox import relay_outbox
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import admission, joining, live, room_selectors, room_waitlist
from waitroom.consumers import QueueConsumer
from waitroom.errors import QueueClosed
from waitroom.models import QueueEntry, QueueStatus, StockState, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


def _sell(booking: Booking) -> None:
    with transaction.atomic():
        locked = Booking.objects.select_for_update().get(pk=booking.pk)
        sell_held_booking(locked, now=timezone.now())


@pytest.fixture
def tiny_room(room_redis, settings):
    """A protected flight of 6 units (one row of seats), shuffled, two shoppers admitted
    and holding all 6, two more customers waiting behind them."""
    no_limits(settings)
    flight = small_flight(rows=1, overbook=0)
    t0 = timezone.now() - timedelta(seconds=30)
    room = protect(flight, opens_at=t0, rate=6000, max_inside=2)
    first, second, *waiting = make_customers(4)
    for customer in (first, second, *waiting):
        joining.join_queue(room_id=room.pk, customer=customer)
    admission.admit_shoppers(room_id=room.pk, now=t0)  # the shuffle
    admitted = admission.admit_shoppers(room_id=room.pk).admitted
    assert len(admitted) == 2
    inside = {e.customer_id for e in QueueEntry.objects.filter(pk__in=admitted)}
    shoppers = [c for c in (first, second, *waiting) if c.pk in inside]
    keys = dict(QueueEntry.objects.filter(room=room).values_list("customer_id", "order_key"))
    behind = sorted(
        (c for c in (first, second, *waiting) if c.pk not in inside), key=lambda c: keys[c.pk]
    )
    holds = [
        hold_seatless(
            customer=shoppers[0], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=3
        ),
        hold_seatless(
            customer=shoppers[1], sale_id=flight.sale_id, fare_class="ECONOMY", passengers=3
        ),
    ]
    return flight, room, holds, behind


def test_the_waiting_see_units_left_from_postgresql_and_all_held_is_not_sold_out(tiny_room):
    _flight, room, holds, behind = tiny_room
    admission.admit_shoppers(room_id=room.pk)  # a tick reads the stock
    status = room_selectors.queue_status(room=room, customer_id=behind[0].pk)
    assert status["status"] == "WAITING"
    assert (status["unitsLeft"], status["unitsHeld"]) == (0, 6)
    assert status["stock"] == StockState.ALL_HELD and status["soldOut"] is False
    assert status["queueClosed"] is False
    # All held is not sold out: a newcomer may still queue (holds may lapse).
    newcomer = make_customers(1)[0]
    assert joining.join_queue(room_id=room.pk, customer=newcomer).status == QueueStatus.WAITING

    cancel_hold(customer=holds[1].customer, booking_id=holds[1].pk)
    admission.admit_shoppers(room_id=room.pk)  # lets one more in (one place free inside)
    status = room_selectors.queue_status(room=room, customer_id=newcomer.pk)
    assert status["status"] == "WAITING"
    assert (status["unitsLeft"], status["unitsHeld"], status["stock"]) == (3, 3, "AVAILABLE")
    assert status["unitsLeft"] == room_selectors.inventory_of(room=room).left


def test_the_sell_out_closes_the_queue_and_the_waiting_keep_their_place(tiny_room):
    _flight, room, holds, behind = tiny_room
    for booking in holds:
        _sell(booking)
    relay_outbox()  # the consumer of booking.confirmed: no tick needed
    room.refresh_from_db()
    assert room.sold_out_at is not None

    status = room_selectors.queue_status(room=room, customer_id=behind[0].pk)
    assert status["status"] == "WAITING" and status["position"] == 1
    assert status["soldOut"] is True and status["stock"] == "SOLD_OUT"
    assert status["unitsLeft"] == 0 and status["queueClosed"] is True

    # Joining again keeps the place; nobody new gets in: 409 problem+json, nothing written.
    kept = joining.join_queue(room_id=room.pk, customer=behind[0])
    assert kept.status == QueueStatus.WAITING
    newcomer = make_customers(1)[0]
    answer = client_for(newcomer).post(f"/api/waiting-rooms/{room.pk}/queue")
    assert answer.status_code == 409
    assert answer["Content-Type"] == "application/problem+json"
    assert answer.json()["type"].endswith("/queue-sold-out")
    assert not QueueEntry.objects.filter(room=room, customer=newcomer).exists()
    with pytest.raises(QueueClosed):
        joining.join_queue(room_id=room.pk, customer=newcomer)

    # The waiting may join the waitlist (the queue page's form).
    entry = room_waitlist.join_waitlist_from_queue(
        room_id=room.pk, customer=behind[0], fare_class="ECONOMY", party_size=1
    )
    assert entry.pk

    # A tick after the sell-out says the same and admits nobody.
    step = admission.admit_shoppers(room_id=room.pk)
    assert step.admitted == [] and step.units_left == 0


def test_the_tick_reopens_the_queue_when_units_come_back(tiny_room):
    flight, room, holds, _behind = tiny_room
    for booking in holds:
        _sell(booking)
    assert admission.admit_shoppers(room_id=room.pk).admitted == []  # the tick closes it too
    room.refresh_from_db()
    assert room.sold_out_at is not None
    WaitingRoom.objects.filter(pk=room.pk).update(sold_out_at=None)
    from bookings.models import Inventory

    Inventory.objects.filter(sale_id=flight.sale_id).update(sold=5)  # one came back
    admission.admit_shoppers(room_id=room.pk)
    room.refresh_from_db()
    assert room.sold_out_at is None
    assert joining.join_queue(room_id=room.pk, customer=make_customers(1)[0])


def test_the_sell_out_reaches_every_waiting_page_over_the_websocket(tiny_room):
    _flight, room, holds, behind = tiny_room
    pages = behind + make_customers(3)
    for customer in pages[2:]:
        joining.join_queue(room_id=room.pk, customer=customer)
    admission.admit_shoppers(room_id=room.pk)  # the later ones get their order keys

    async def watch_the_sell_out() -> list[dict]:
        sockets = []
        for customer in pages:
            ws = ApplicationCommunicator(QueueConsumer.as_asgi(), _scope(room.pk, customer))
            await ws.send_input({"type": "websocket.connect"})
            assert (await ws.receive_output(timeout=5))["type"] == "websocket.accept"
            first = await _receive_json(ws, timeout=5)
            assert first["status"] == "WAITING" and not first.get("soldOut")
            sockets.append(ws)
        await asyncio.to_thread(_sell_everything, holds)
        told = [await _receive_json(ws, timeout=1) for ws in sockets]
        for ws in sockets:
            await ws.send_input({"type": "websocket.disconnect", "code": 1000})
            await ws.wait(timeout=2)
        return told

    told = async_to_sync(watch_the_sell_out)()
    assert len(told) == len(pages)
    for message in told:
        assert message["soldOut"] is True and message["stock"] == "SOLD_OUT"
        assert message["queueClosed"] is True and message["unitsLeft"] == 0
        assert message["status"] == "WAITING" and message["position"] >= 1  # place kept


def _scope(room_id: int, customer) -> dict:
    return {
        "type": "websocket",
        "path": f"/ws/waiting-room/{room_id}/",
        "user": customer,
        "url_route": {"kwargs": {"room_id": room_id}},
        "headers": [],
    }


async def _receive_json(ws: ApplicationCommunicator, *, timeout: float) -> dict:
    message = await ws.receive_output(timeout=timeout)
    assert message["type"] == "websocket.send", message
    return json.loads(message["text"])


def _sell_everything(holds) -> None:
    from django.db import close_old_connections

    for booking in holds:
        _sell(booking)
    relay_outbox()
    close_old_connections()


def test_without_the_outbox_path_the_pages_wait_for_a_tick(tiny_room):
    """The control: the push comes from the consumer of booking.confirmed.  Without that
    consumer the room is not closed at the sale; only the next tick finds it."""
    from kernel.events import _consumers

    _flight, room, holds, _behind = tiny_room
    consumer = _consumers.pop("waitroom.close_if_sold_out")
    try:
        for booking in holds:
            _sell(booking)
        relay_outbox()
        room.refresh_from_db()
        assert room.sold_out_at is None
    finally:
        _consumers[consumer.name] = consumer
    admission.admit_shoppers(room_id=room.pk)
    room.refresh_from_db()
    assert room.sold_out_at is not None


def test_the_step_that_sells_out_tells_each_page_once_and_a_later_page_reads_it(
    tiny_room, monkeypatch
):
    """The admission step that finds the sale sold out sends its news on its move: each
    waiting page gets one message (not a sell-out and then a move), its place kept; a page
    that connects afterwards reads the closed queue in its snapshot."""
    _flight, room, holds, behind = tiny_room
    pages = behind + make_customers(3)
    for customer in pages[2:]:
        joining.join_queue(room_id=room.pk, customer=customer)
    admission.admit_shoppers(room_id=room.pk)  # the later ones get their order keys
    separate = []
    publish = live.publish_sold_out
    monkeypatch.setattr(live, "publish_sold_out", lambda **kw: separate.append(publish(**kw)))

    async def watch() -> tuple[list[dict], dict]:
        sockets = [(await _connect(room.pk, customer)).ws for customer in pages]
        await asyncio.to_thread(_sell_then_step, holds, room.pk)
        told = [await _receive_json(ws, timeout=2) for ws in sockets]
        for ws in sockets:
            assert await ws.receive_nothing(timeout=0.3)  # one message, not two
        late = await _connect(room.pk, pages[0], waiting_open=False)  # a page opened later
        for ws in [*sockets, late.ws]:
            await ws.send_input({"type": "websocket.disconnect", "code": 1000})
            await ws.wait(timeout=2)
        return told, late.first

    told, late = async_to_sync(watch)()
    assert separate == []  # the move carried it
    positions = sorted(message["position"] for message in told)
    assert positions == list(range(1, len(pages) + 1))  # every place kept
    for message in told:
        assert message["queueClosed"] is True and message["soldOut"] is True
        assert message["stock"] == "SOLD_OUT" and message["unitsLeft"] == 0
        assert message["status"] == "WAITING" and message["unlikely"] is True
    assert late["queueClosed"] is True and late["soldOut"] is True
    assert late["status"] == "WAITING" and late["position"] >= 1


def test_control_a_move_without_the_news_does_not_tell_the_pages(tiny_room, monkeypatch):
    """The control of the test above: the step's move stripped of its news (and no
    sell-out sent alone) leaves the pages open, so the test above sees the move carry it."""
    _flight, room, holds, behind = tiny_room
    moved = live.publish_queue_moved

    def without_the_news(*, room_id, version, message):
        stripped = {k: v for k, v in message.items() if k != "soldOut"}
        moved(room_id=room_id, version=version, message=stripped)

    monkeypatch.setattr(live, "publish_queue_moved", without_the_news)

    async def watch() -> dict:
        ws = (await _connect(room.pk, behind[0])).ws
        await asyncio.to_thread(_sell_then_step, holds, room.pk)
        told = await _receive_json(ws, timeout=2)
        await ws.send_input({"type": "websocket.disconnect", "code": 1000})
        await ws.wait(timeout=2)
        return told

    told = async_to_sync(watch)()
    assert told["soldOut"] is True  # the move's state says so
    assert not told.get("queueClosed")  # but nothing closed the page's queue


def test_a_step_that_does_not_broadcast_still_sends_the_sell_out(tiny_room):
    """An admission step that is not its tick's last sends no move; the sell-out then goes
    out on its own."""
    _flight, room, holds, behind = tiny_room

    async def watch() -> dict:
        ws = (await _connect(room.pk, behind[0])).ws
        await asyncio.to_thread(_sell_then_step, holds, room.pk, broadcast=False)
        told = await _receive_json(ws, timeout=2)
        await ws.send_input({"type": "websocket.disconnect", "code": 1000})
        await ws.wait(timeout=2)
        return told

    told = async_to_sync(watch)()
    assert told["queueClosed"] is True and told["soldOut"] is True
    assert told["status"] == "WAITING" and told["position"] == 1


@pytest.mark.parametrize("carries_the_news", [True, False], ids=["sold-out", "control"])
def test_the_news_on_a_move_the_page_already_has_is_still_told(tiny_room, carries_the_news):
    """A page whose snapshot has the step's version (read just before the step closed the
    room) ignores the move but not the sell-out on it.  The control: the same move without
    the news tells that page nothing, so the first case is the news being kept."""
    from channels.layers import get_channel_layer

    _flight, room, _holds, behind = tiny_room
    stock = {"unitsLeft": 0, "unitsHeld": 0, "stock": "SOLD_OUT", "soldOut": True}

    async def watch() -> dict | None:
        page = await _connect(room.pk, behind[0])
        event = {
            "type": "queue.moved",
            "version": page.first["version"],
            "resync": False,
            "removed": [],
            "admitted": [],
            "state": {},
            **({"soldOut": {**stock, "stockAt": 1e12}} if carries_the_news else {}),
        }
        await get_channel_layer().group_send(live.queue_group(room.pk), event)
        told = None
        if not await page.ws.receive_nothing(timeout=1):
            told = await _receive_json(page.ws, timeout=1)
        await page.ws.send_input({"type": "websocket.disconnect", "code": 1000})
        await page.ws.wait(timeout=2)
        return told

    told = async_to_sync(watch)()
    if carries_the_news:
        assert told["queueClosed"] is True and told["soldOut"] is True
        assert told["position"] == 1
    else:
        assert told is None


@dataclass
class _Page:
    ws: ApplicationCommunicator
    first: dict


async def _connect(room_id: int, customer, *, waiting_open: bool = True) -> _Page:
    """A queue page, its snapshot read (with `waiting_open`: a waiting place, not sold out)."""
    ws = ApplicationCommunicator(QueueConsumer.as_asgi(), _scope(room_id, customer))
    await ws.send_input({"type": "websocket.connect"})
    assert (await ws.receive_output(timeout=5))["type"] == "websocket.accept"
    first = await _receive_json(ws, timeout=5)
    if waiting_open:
        assert first["status"] == "WAITING" and not first.get("soldOut")
    return _Page(ws, first)


def _sell_then_step(holds, room_id: int, *, broadcast: bool = True) -> None:
    """Every unit sold without the outbox's push: the admission step finds it."""
    from django.db import close_old_connections

    for booking in holds:
        _sell(booking)
    admission.admit_shoppers(room_id=room_id, broadcast=broadcast)
    close_old_connections()
