"""The sell-out consumer's waiting-room lookup, read once per sale and relay batch
(kernel.outbox.batch_read, issue 26): a batch holding confirmations of several sales
checks each sale's own room, and a room opened after a batch is seen by the next one."""

import pytest

from kernel.models import OutboxEvent
from kernel.outbox import relay_batch
from tests.waitroom.room_helpers import protect, small_flight
from waitroom import outbox_handlers, room_selectors

pytestmark = pytest.mark.django_db


def _confirmed(flight) -> OutboxEvent:
    return OutboxEvent(
        event_type="booking.confirmed", payload={"saleId": flight.sale_id, "bookingId": 0}
    )


@pytest.fixture
def checked(monkeypatch):
    rooms: list[int] = []
    monkeypatch.setattr(
        outbox_handlers.sell_out,
        "close_queue_if_sold_out",
        lambda *, room_id: rooms.append(room_id),
    )
    return rooms


@pytest.fixture
def reads(monkeypatch):
    sales: list[int] = []
    real = room_selectors.room_of_sale

    def counting(*, sale_id):
        sales.append(sale_id)
        return real(sale_id=sale_id)

    monkeypatch.setattr(room_selectors, "room_of_sale", counting)
    return sales


def test_a_batch_of_several_sales_checks_each_sales_own_room(room_redis, checked, reads):
    protected, other = small_flight(), small_flight()
    room = protect(protected)
    events = [_confirmed(protected), _confirmed(other), _confirmed(protected), _confirmed(other)]

    with relay_batch():
        for event in events:
            outbox_handlers.close_queue_if_sold_out(event)

    assert checked == [room.pk, room.pk]  # the unprotected sale's events check no room
    assert reads == [protected.sale_id, other.sale_id]  # once per sale, not per event


def test_a_room_opened_after_a_batch_is_seen_by_the_next(room_redis, checked, reads):
    flight = small_flight()
    with relay_batch():
        outbox_handlers.close_queue_if_sold_out(_confirmed(flight))
    room = protect(flight)
    with relay_batch():
        outbox_handlers.close_queue_if_sold_out(_confirmed(flight))

    assert checked == [room.pk]
    assert reads == [flight.sale_id, flight.sale_id]


def test_control_without_a_batch_every_event_reads(room_redis, checked, reads):
    flight = small_flight()
    room = protect(flight)
    for _ in range(2):
        outbox_handlers.close_queue_if_sold_out(_confirmed(flight))

    assert checked == [room.pk, room.pk]
    assert reads == [flight.sale_id, flight.sale_id]  # what the batch test's check would catch
