"""Partners' outbox consumers: every partner event type becomes webhook deliveries."""

from __future__ import annotations

from kernel.events import register_consumer
from kernel.models import OutboxEvent
from partners import services
from partners.models import PartnerEventType


def queue_webhook_deliveries(event: OutboxEvent) -> None:
    services.queue_deliveries(event=event)


for _event_type in PartnerEventType.values:
    register_consumer(_event_type, name=f"partners.webhooks.{_event_type}")(
        queue_webhook_deliveries
    )
