"""The queue consumer's dispatch: a tick's position update costs no hop onto the database
thread (one per waiting page per tick), handlers that do read the database still get
their stale connections closed (by `database_sync_to_async`), and the shuffle's broadcast
costs one queue read per process, not one per page."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.waitroom.room_helpers import make_customers, no_limits, protect, small_flight
from waitroom import admission, joining, queue, room_selectors
from waitroom.consumers import QueueConsumer
from waitroom.models import QueueEntry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def closes(monkeypatch):
    """Counts `close_old_connections` wherever channels calls it."""
    calls = []
    import channels.db

    def counting():
        calls.append(1)

    monkeypatch.setattr(channels.db, "close_old_connections", counting)
    return calls


def waiting_consumer(sent: list) -> QueueConsumer:
    consumer = QueueConsumer()
    consumer.room_id, consumer.customer_id = 1, 1
    consumer.snapshot = {
        "saleId": 1,
        "status": "WAITING",
        "entryId": 7,
        "orderKey": 50,
        "position": 5,
        "version": 3,
    }

    async def send_json(content, close=False):
        sent.append(content)

    consumer.send_json = send_json
    return consumer


def test_a_tick_moves_the_place_without_touching_the_database_thread(closes):
    sent = []
    consumer = waiting_consumer(sent)
    tick = {
        "type": "queue.moved",
        "version": 4,
        "resync": False,
        "removed": [10, 20, 60],  # two of them were ahead
        "admitted": [1, 2, 3],
        "state": {"horizon": 100, "paused": False, "interval": 0.1},
    }

    asyncio.run(consumer.dispatch(tick))

    assert [(m["position"], m["version"]) for m in sent] == [(3, 4)]
    assert closes == []


def test_a_handler_that_reads_the_database_still_closes_stale_connections(closes):
    sent = []
    consumer = waiting_consumer(sent)

    # Sale 1 does not exist here: the snapshot reads the database and finds nothing.
    asyncio.run(consumer.dispatch({"type": "queue.admitted"}))

    assert sent == []
    assert closes  # before (and after) the query, on the database thread


def test_an_unknown_message_type_is_still_an_error():
    consumer = waiting_consumer([])

    with pytest.raises(ValueError, match="No handler"):
        asyncio.run(consumer.dispatch({"type": "no.such"}))


def test_the_shuffle_moves_every_page_with_one_queue_read_per_process(
    room_redis, monkeypatch, settings
):
    """At the on-sale time every pre-queue page must learn its shuffled place at once.  One
    read of the whole queue serves all of this process's pages (it was one Redis round trip
    and thread hop per page, in the same instant as the first holds), and each page still
    gets exactly its own place, the admitted their admission."""
    no_limits(settings)
    flight = small_flight(rows=1, overbook=0)  # 6 units: a horizon of 9 admits 6 at rate 360
    opens_at = timezone.now() + timedelta(minutes=5)
    sale = protect(flight, opens_at=opens_at, rate=360)
    customers = make_customers(30)
    for customer in customers:
        joining.join_queue(room_id=sale.pk, customer=customer)
    pages = {}
    for customer in customers:
        page = QueueConsumer()
        page.room_id, page.customer_id = sale.pk, customer.pk
        page.snapshot = room_selectors.queue_status(room=sale, customer_id=customer.pk)
        assert page.snapshot["status"] == "PREQUEUE"
        page.sent = []

        async def send_json(content, close=False, sent=page.sent):
            sent.append(content)

        page.send_json = send_json
        pages[customer.pk] = page
    broadcasts = []
    monkeypatch.setattr(
        admission.live,
        "publish_queue_moved",
        lambda *, room_id, version, message: broadcasts.append({"version": version, **message}),
    )
    whole_reads, single_reads = [], []
    monkeypatch.setattr(queue, "all_places", _counting(queue.all_places, whole_reads), raising=True)
    monkeypatch.setattr(queue, "place", _counting(queue.place, single_reads), raising=True)

    result = admission.admit_shoppers(room_id=sale.pk, now=opens_at + timedelta(seconds=3))
    assert result.shuffled == 30 and len(result.admitted) > 0
    (shuffle,) = broadcasts
    assert shuffle["resync"] is True

    async def deliver() -> None:
        await asyncio.gather(
            *(page.dispatch({"type": "queue.moved", **shuffle}) for page in pages.values())
        )

    asyncio.run(deliver())

    assert len(whole_reads) == 1 and single_reads == []
    admitted = set(
        QueueEntry.objects.filter(pk__in=result.admitted).values_list("customer_id", flat=True)
    )
    for customer_id, page in pages.items():
        (last,) = page.sent
        now_says = room_selectors.queue_status(room=sale, customer_id=customer_id)
        if customer_id in admitted:
            assert last["status"] == "ADMITTED" == now_says["status"]
        else:
            assert last["status"] == "WAITING"
            assert last["position"] == now_says["position"]
            assert last["version"] == now_says["version"]
    waiting = sorted(p.sent[0]["position"] for c, p in pages.items() if c not in admitted)
    assert waiting == list(range(1, 30 - len(admitted) + 1))


def _counting(function, calls: list):
    def counted(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    return counted
