"""The transactional outbox: writing events inside the change, relaying them after it.

Writers call `emit_event(s)` inside the transaction of the change they announce; when that
transaction commits, the relay is kicked unless a kick is already pending (kernel.kicks), and
beat runs it every second anyway.  The relay
claims a batch with SKIP LOCKED, so any number of relays can run side by side, hands each
event to its registered consumers and marks it published.  Delivery is at least once; each
consumer's receipt is written in the savepoint of its effect, so effects happen exactly once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from kernel import kicks, metrics
from kernel.compiled_inserts import CompiledInsert
from kernel.events import Consumer, consumers_for
from kernel.models import OutboxEvent, ProcessedEvent

logger = logging.getLogger(__name__)
MAX_BACKOFF = timedelta(minutes=10)


def _assert_in_transaction() -> None:
    assert transaction.get_connection().in_atomic_block, (
        "outbox events are written inside the transaction they announce"
    )


def emit_event(
    *,
    sale_id: int,
    aggregate_type: str,
    aggregate_id: object,
    event_type: str,
    payload: dict[str, Any],
) -> OutboxEvent:
    """`sale_id`: the engine sale the event is of (its booking's), so the row is that sale's
    and commits on the sale's node under Citus (kernel/sharding.py)."""
    _assert_in_transaction()
    event = _OUTBOX_INSERT.create(
        sale_id=sale_id,
        aggregate_type=aggregate_type,
        aggregate_id=str(aggregate_id),
        event_type=event_type,
        payload=payload,
        created_at=timezone.now(),
    )
    _kick_relay_on_commit()
    return event


# `OutboxEvent.objects.create` without compiling its INSERT for every event
# (kernel.compiled_inserts): every sale and cancellation writes one.
_OUTBOX_INSERT = CompiledInsert(OutboxEvent)


def emit_events(events: list[OutboxEvent]) -> None:
    """Bulk variant for sweeps; every event must already carry its fields, its sale too."""
    _assert_in_transaction()
    if not events:
        return
    assert all(event.sale_id is not None for event in events), "every event names its sale"
    now = timezone.now()
    for event in events:
        event.created_at = now
    OutboxEvent.objects.bulk_create(events)
    _kick_relay_on_commit()


def _kick_relay_on_commit() -> None:
    if settings.OUTBOX["KICK_ON_COMMIT"]:
        # robust: the change is committed already; a broker hiccup must not turn it into a
        # failed request.  Beat's one-second tick picks the events up regardless.
        transaction.on_commit(kick_relay, robust=True)
        if settings.EVENT_LOG["URL"]:
            transaction.on_commit(kick_event_log_relay, robust=True)


# The names of the relays' pending-kick flags (kernel.kicks): the relay task takes its flag
# before it reads, so a kick still pending covers every commit made while it stands.
OUTBOX_RELAY = "outbox"
EVENT_LOG_RELAY = "event-log"


def kick_relay() -> None:
    from kernel.tasks import relay_outbox

    kicks.kick(relay_outbox, OUTBOX_RELAY, expires=30, retry=False)


def kick_event_log_relay() -> None:
    from kernel.tasks import relay_event_log

    kicks.kick(relay_event_log, EVENT_LOG_RELAY, expires=30, retry=False)


# --- relay -------------------------------------------------------------------------------------


@dataclass
class RelayReport:
    claimed: int = 0
    published: int = 0
    failed: int = 0
    deferred: int = 0  # waiting behind an earlier event of the same booking


def relay_outbox(*, batch_size: int | None = None, now: datetime | None = None) -> RelayReport:
    """Deliver one batch of due, unpublished events to their consumers.

    Order per aggregate: an event is delivered only when every earlier unpublished event of
    its aggregate was delivered by this same batch; one still locked by another relay, failed
    or waiting for a retry holds the later ones back.
    """
    batch_size = batch_size or settings.OUTBOX["RELAY_BATCH_SIZE"]
    now = now or timezone.now()
    report = RelayReport()
    with transaction.atomic():
        claimed = list(
            OutboxEvent.objects.select_for_update(skip_locked=True)
            .filter(published_at__isnull=True, attempts__lt=settings.OUTBOX["MAX_ATTEMPTS"])
            .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
            .order_by("id")[:batch_size]
        )
        report.claimed = len(claimed)
        if not claimed:
            return report
        unpublished = _unpublished_ids_by_aggregate(claimed)
        with relay_batch():
            _relay_claimed(claimed, unpublished, now, report)
    return report


def _relay_claimed(
    claimed: list[OutboxEvent],
    unpublished: dict[tuple[str, str], list[int]],
    now: datetime,
    report: RelayReport,
) -> None:
    delivered: set[int] = set()
    for event in claimed:
        key = (event.aggregate_type, event.aggregate_id)
        if any(pk < event.pk and pk not in delivered for pk in unpublished[key]):
            report.deferred += 1
            continue
        errors = deliver_event(event)
        if errors:
            report.failed += 1
            metrics.count("outbox_relay_failures", event_type=event.event_type)
            attempts = event.attempts + 1
            OutboxEvent.objects.filter(pk=event.pk).update(
                attempts=attempts,
                next_attempt_at=now + min(timedelta(seconds=2 ** (attempts - 1)), MAX_BACKOFF),
                last_error="\n".join(errors)[:4000],
            )
            if attempts >= settings.OUTBOX["MAX_ATTEMPTS"]:
                logger.error(
                    "outbox event %s gave up after %s attempts; its booking's "
                    "later events wait for an operator",
                    event.pk,
                    attempts,
                )
            continue
        OutboxEvent.objects.filter(pk=event.pk).update(
            published_at=timezone.now(), next_attempt_at=None, last_error=""
        )
        delivered.add(event.pk)
        report.published += 1


# --- reads shared by a batch's events ----------------------------------------------------------

_batch = threading.local()
T = TypeVar("T")


@contextlib.contextmanager
def relay_batch() -> Iterator[None]:
    """The span of one relay batch: `batch_read`'s answers live as long as it does."""
    _batch.memo = {}
    try:
        yield
    finally:
        _batch.memo = None


def batch_read(key: Hashable, read: Callable[[], T]) -> T:
    """`read()`, made once per relay batch for each `key` (outside a batch: every call).

    For consumers' reads that every event of a batch would repeat (a sale's waiting room,
    partners' active endpoints): one statement a batch instead of one an event (issue 26).
    The answer is read during the batch, so it holds every row committed before the batch
    started; a row committed while the batch runs is seen by the next one, as an event
    claimed a moment later would see it.  Keys carry what the answer depends on (the sale):
    one batch holds events of many sales.  Only for reads the batch's consumers do not
    change themselves."""
    memo = getattr(_batch, "memo", None)
    if memo is None:
        return read()
    if key not in memo:
        memo[key] = read()
    return memo[key]


def _unpublished_ids_by_aggregate(events: list[OutboxEvent]) -> dict[tuple[str, str], list[int]]:
    keys = {(e.aggregate_type, e.aggregate_id) for e in events}
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    rows = OutboxEvent.objects.filter(
        published_at__isnull=True, aggregate_id__in={k[1] for k in keys}
    ).values_list("aggregate_type", "aggregate_id", "id")
    for aggregate_type, aggregate_id, pk in rows:
        if (aggregate_type, aggregate_id) in keys:
            found[(aggregate_type, aggregate_id)].append(pk)
    return found


def deliver_event(event: OutboxEvent) -> list[str]:
    """Hand `event` to each of its consumers; returns the errors of those that failed.

    Safe to call any number of times, also concurrently: a consumer that already has its
    receipt for the event is skipped.  Call inside a transaction.
    """
    errors = []
    for consumer in consumers_for(event.event_type):
        try:
            _consume(consumer, event)
        except Exception as exc:
            logger.exception("outbox consumer %s failed on event %s", consumer.name, event.pk)
            errors.append(f"{consumer.name}: {exc!r}")
    return errors


def _consume(consumer: Consumer, event: OutboxEvent) -> bool:
    with transaction.atomic():
        # The receipt first: a concurrent delivery of the same event waits here on the
        # unique index and then finds the work done (or, if ours rolls back, does it).
        if not _take_receipt(consumer, event):
            return False
        consumer.handle(event)
    return True


def _take_receipt(consumer: Consumer, event: OutboxEvent) -> bool:
    """Write the consumer's receipt for the event; False when it already has one.

    INSERT ... ON CONFLICT DO NOTHING waits on a concurrent uncommitted receipt exactly as a
    plain INSERT does, and then inserts nothing (it committed) or inserts (it rolled back);
    unlike the INSERT it needs no savepoint of its own to survive the conflict: two round
    trips fewer per consumer and event, four consumers to a confirmed booking (issue 26)."""
    receipt = _RECEIPT_INSERT.create(
        sale_id=event.sale_id,
        consumer=consumer.name,
        event=event,
        processed_at=timezone.now(),
    )
    return receipt is not None


_RECEIPT_INSERT = CompiledInsert(ProcessedEvent, ignore_conflicts=True)


def redeliver_event(*, event_id: int) -> list[str]:
    """Deliver one event again, published or not (operators; duplicate-delivery tests)."""
    with transaction.atomic():
        event = OutboxEvent.objects.get(pk=event_id)
        return deliver_event(event)


def purge_published(*, keep_days: int = 14, now: datetime | None = None) -> int:
    """Delete events published more than `keep_days` ago (their receipts go with them).

    With the event log on, an event the log has not acknowledged yet is kept whatever its
    age: the outbox row is the log relay's only copy of it."""
    cutoff = (now or timezone.now()) - timedelta(days=keep_days)
    old = OutboxEvent.objects.filter(published_at__lt=cutoff)
    if settings.EVENT_LOG["URL"]:
        old = old.filter(logged_at__isnull=False)
    with transaction.atomic():
        deleted, _ = old.delete()
    return deleted
