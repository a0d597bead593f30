"""The waiting room's outbox consumers.  Thin: event in, service call."""

from __future__ import annotations

from kernel.events import register_consumer
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType
from waitroom import room_selectors, sell_out


@register_consumer(OutboxEventType.BOOKING_CONFIRMED, name="waitroom.close_if_sold_out")
def close_queue_if_sold_out(event: OutboxEvent) -> None:
    # The last unit sold: every waiting page hears now, not at the next admission tick.
    room_id = room_selectors.room_of_sale(sale_id=event.payload["saleId"])
    if room_id is not None:
        sell_out.close_queue_if_sold_out(room_id=room_id)
