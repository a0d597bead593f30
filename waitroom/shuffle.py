"""The pre-queue's shuffle at the on-sale time, by the published algorithm
(`room_selectors.shuffle_order`, docs/architecture.md, "Waiting room"), and the back of the
queue for those who joined the pre-queue while it was being drawn."""

from __future__ import annotations

from datetime import datetime

from waitroom import room_selectors
from waitroom.models import QueueEntry, QueueStatus, WaitingRoom
from waitroom.order_keys import in_lane, next_fifo_key


def shuffle_prequeue(room: WaitingRoom, now: datetime) -> int:
    """Order the pre-queue by the published algorithm; runs once, under the room lock (the
    caller saves the room's `shuffled_at` and `shuffled_count`)."""
    rows = list(
        QueueEntry.objects.filter(
            room=room, status=QueueStatus.WAITING, order_key__isnull=True
        ).values_list("id", "customer_id", "lane")
    )
    by_customer = {customer_id: entry_id for entry_id, customer_id, _lane in rows}
    lanes = {customer_id: lane for _entry_id, customer_id, lane in rows}
    order = room_selectors.shuffle_order(
        seed=room.seed, room_id=room.pk, customer_ids=list(by_customer)
    )
    QueueEntry.objects.bulk_update(
        # One published order over everyone; the priority lane's keys are shifted before
        # the general ones (order_keys.in_lane), so each lane keeps the published order.
        [
            QueueEntry(pk=by_customer[c], order_key=in_lane(i, lanes[c]))
            for i, c in enumerate(order, start=1)
        ],
        ["order_key"],
        batch_size=1000,
    )
    room.shuffled_at, room.shuffled_count = now, len(order)
    return len(order)


def key_late_arrivals(room: WaitingRoom) -> list[tuple[int, int]]:
    """Entries that joined the pre-queue while the shuffle was being drawn go to the back,
    in join order: their (entry id, order key) pairs."""
    late = list(
        QueueEntry.objects.filter(room=room, status=QueueStatus.WAITING, order_key__isnull=True)
        .order_by("joined_at", "id")
        .values_list("id", "lane")
    )
    keyed = []
    for entry_id, lane in late:
        order_key = in_lane(next_fifo_key(), lane)
        QueueEntry.objects.filter(pk=entry_id, order_key__isnull=True).update(order_key=order_key)
        keyed.append((entry_id, order_key))
    return keyed
