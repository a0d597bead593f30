"""The waiting room's outbox consumers.  Thin: event in, service call."""

from __future__ import annotations

from kernel.events import register_consumer
from kernel.models import OutboxEvent
from kernel.outbox import batch_read
from kernel.outbox_types import OutboxEventType
from waitroom import room_selectors, sell_out


@register_consumer(OutboxEventType.BOOKING_CONFIRMED, name="waitroom.close_if_sold_out")
def close_queue_if_sold_out(event: OutboxEvent) -> None:
    # The last unit sold: every waiting page hears now, not at the next admission tick.
    # Once per sale and relay batch: a batch's confirmations are mostly of one sale.
    sale_id = event.payload["saleId"]
    room_id = batch_read(
        ("waitroom.room_of_sale", sale_id), lambda: room_selectors.room_of_sale(sale_id=sale_id)
    )
    if room_id is not None:
        sell_out.close_queue_if_sold_out(room_id=room_id)
