"""The queue consumer's dispatch: a tick's position update costs no hop onto the database
thread (one per waiting page per tick), and handlers that do read the database still get
their stale connections closed (by `database_sync_to_async`)."""

from __future__ import annotations

import asyncio

import pytest

from waitroom.consumers import QueueConsumer

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
    consumer.sale_id, consumer.customer_id = 1, 1
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
