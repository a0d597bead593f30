"""How the sandbox delivers its events: the table is the queue, a kicked relay publishes.

A sandbox event row (`SandboxEvent`, written with its charge) is owed to our webhook until
`queued_at` says its delivery task was published.  The pay request used to publish that
task itself after commit (`apply_async`: a twelfth of its Python and two Redis commands,
docs/performance.md "Issue 26: the pay's publish and waitlist UPDATE"); now it only kicks
the relay (kernel.kicks: one SET NX, at most one kick pending), and the relay, in a
worker, claims the unqueued events with SKIP LOCKED, marks them queued and publishes one
`deliver_sandbox_event` per copy, with the same countdown and duplicates as before.  Beat
runs the relay every second too, so an event whose kick was lost (a broker hiccup after
the commit, a process killed between the commit and the publish) is delivered anyway:
which the publish after commit could not promise.  Each delivery is then retried with
backoff until our endpoint answers 2xx, as before (payments.tasks).
"""

from __future__ import annotations

import json

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from kernel import kicks
from payments.models import SandboxEvent

# The relay's pending-kick flag (kernel.kicks).
SANDBOX_DELIVERIES = "sandbox-deliveries"
BATCH_SIZE = 500


def delivers() -> bool:
    return settings.PAYMENTS_SANDBOX["DELIVER_WEBHOOKS"]


def kick_on_commit() -> None:
    """After commit (at once outside a transaction), the relay is kicked.  Robust: the events
    are committed already, and beat's tick relays them should the kick fail."""
    if delivers():
        transaction.on_commit(kick_relay, robust=True)


def kick_relay() -> None:
    from payments.tasks import queue_sandbox_deliveries

    kicks.kick(queue_sandbox_deliveries, SANDBOX_DELIVERIES, expires=30, retry=False)


def queue_deliveries(*, batch_size: int = BATCH_SIZE) -> int:
    """One batch: claim events not yet queued (SKIP LOCKED: relays side by side take
    different rows), mark them queued, and after commit publish their delivery tasks.  The
    number claimed."""
    with transaction.atomic():
        ids = list(
            SandboxEvent.objects.select_for_update(skip_locked=True)
            .filter(queued_at__isnull=True)
            .order_by("created_at")
            .values_list("pk", flat=True)[:batch_size]
        )
        if ids:
            SandboxEvent.objects.filter(pk__in=ids).update(queued_at=timezone.now())
    schedule_deliveries(ids)
    return len(ids)


def schedule_deliveries(event_ids: list[str]) -> None:
    from payments.tasks import deliver_sandbox_event

    cfg = settings.PAYMENTS_SANDBOX
    delay = cfg["DELAY_SECONDS"] or None
    for event_id in event_ids:
        for _ in range(1 + cfg["DUPLICATE_DELIVERIES"]):
            deliver_sandbox_event.apply_async((event_id,), countdown=delay)


def deliver_event(*, event_id: str) -> int:
    """POST one event to our webhook URL; returns the HTTP status (0 when unreachable)."""
    import requests

    from payments.gateways.sandbox import SIGNATURE_HEADER, signature_header

    cfg = settings.PAYMENTS_SANDBOX
    event = SandboxEvent.objects.get(pk=event_id)
    body = json.dumps(event.payload, separators=(",", ":"), sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: signature_header(body=body, secret=cfg["WEBHOOK_SECRET"]),
    }
    try:
        status = requests.post(
            cfg["WEBHOOK_URL"], data=body, headers=headers, timeout=cfg["TIMEOUT_SECONDS"]
        ).status_code
    except requests.RequestException:
        status = 0
    delivered = 200 <= status < 300
    SandboxEvent.objects.filter(pk=event_id).update(
        attempts=F("attempts") + 1,
        last_status=status or None,
        **({"delivered_at": timezone.now()} if delivered else {}),
    )
    return status


def backoff_seconds(retries: int) -> int:
    cfg = settings.PAYMENTS_SANDBOX
    return min(cfg["BACKOFF_BASE_SECONDS"] * 2**retries, cfg["BACKOFF_MAX_SECONDS"])
