"""The check-in sync's read loop: fetch from its durable consumer, apply, then acknowledge.

The order of the three steps is the guarantee.  The effect and its receipt commit together;
the ack comes after the commit.  A consumer killed before the ack gets the message again
(after `ack_wait`) and its receipt makes that a no-op; killed before the commit, it did
nothing and does it all on the redelivery.  So: at least once from the log, exactly once here.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings

from checkin_sync import services
from kernel.eventlog.reader import LogReader, delete_durable

logger = logging.getLogger(__name__)
DURABLE = "checkin-sync"
RETRY_DELAY_SECONDS = 1.0


@dataclass
class SyncReport:
    delivered: int = 0
    applied: int = 0
    duplicates: int = 0  # delivered again, found applied, acknowledged without effect
    retried: int = 0  # failed, NAK'd for redelivery


def open_reader(
    *, durable: str = DURABLE, max_ack_pending: int = 1, ack_wait_seconds: float = 30.0
) -> LogReader:
    config = settings.EVENT_LOG
    return LogReader(
        url=config["URL"],
        stream=config["STREAM"],
        durable=durable,
        filter_subject=f"{config['SUBJECT_PREFIX']}.booking.>",
        max_ack_pending=max_ack_pending,
        ack_wait_seconds=ack_wait_seconds,
    )


def sync_from_log(
    reader: LogReader,
    *,
    idle_seconds: float = 2.0,
    max_messages: int | None = None,
    batch: int = 10,
) -> SyncReport:
    """Apply messages until none came for `idle_seconds` (or `max_messages` were delivered)."""
    report = SyncReport()
    idle_since = time.monotonic()
    while max_messages is None or report.delivered < max_messages:
        deliveries = reader.fetch(batch=batch, wait=min(1.0, idle_seconds))
        if not deliveries:
            if time.monotonic() - idle_since >= idle_seconds:
                break
            continue
        idle_since = time.monotonic()
        for delivery in deliveries:
            report.delivered += 1
            try:
                applied = services.apply_logged_event(
                    event=delivery.event, stream_sequence=delivery.stream_sequence
                )
            except Exception:
                logger.exception("check-in sync failed on event %s", delivery.event.event_id)
                report.retried += 1
                reader.nak(delivery, delay=RETRY_DELAY_SECONDS)
                continue
            report.applied += applied
            report.duplicates += not applied
            reader.ack(delivery)
    return report


def replay_from_start(*, durable: str = DURABLE) -> None:
    """Forget the stored offset, then the mirror; the next sync rebuilds from offset 0.

    In this order: a crash in between leaves the old mirror with a new consumer at 0, whose
    receipts skip what is already applied; the other order would resume at the old offset
    with an empty mirror."""
    config = settings.EVENT_LOG
    delete_durable(url=config["URL"], stream=config["STREAM"], durable=durable)
    services.forget_mirror()
