"""Outgoing webhooks: register endpoints, turn outbox events into deliveries, deliver them.

Deliveries are decided inside the outbox relay's transaction (one row per event and endpoint,
unique, so a redelivered event adds nothing) and POSTed after commit by a Celery task.  The
POST is at least once: a worker killed after the partner answered but before we wrote it down
sends again, with the same event id in the body and the header, so the partner dedupes.
"""

from __future__ import annotations

import json
import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from bookings import catalogue
from bookings.models import Booking, Sale
from kernel import metrics
from kernel.errors import InvalidRequest
from kernel.models import OutboxEvent
from kernel.outbox import batch_read
from partners.models import DeliveryStatus, PartnerEventType, WebhookDelivery, WebhookEndpoint
from partners.secret_box import seal
from partners.signing import (
    ATTEMPT_HEADER,
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    signatures_header,
)
from partners.transport import pinned_session
from partners.urls_check import check_endpoint_url, delivery_target

logger = logging.getLogger(__name__)
# Fixed forever: partners dedupe by the ids derived from it.
EVENT_ID_NAMESPACE = uuid.UUID("8f4d1c2e-5b7a-4f0e-9a63-2d1e7c9b0a55")


def cfg() -> dict[str, Any]:
    return settings.PARTNER_WEBHOOKS


def partner_event_id(event: OutboxEvent) -> uuid.UUID:
    """The stable public id of an outbox event: the same on every delivery and retry."""
    return uuid.uuid5(EVENT_ID_NAMESPACE, f"outbox:{event.pk}:{event.created_at.isoformat()}")


def check_event_types(event_types: list[str]) -> list[str]:
    unknown = sorted(set(event_types) - set(PartnerEventType.values))
    if unknown or not event_types:
        raise InvalidRequest(
            f"Subscribe to one or more of: {', '.join(PartnerEventType.values)}.",
            field="event_types",
        )
    return sorted(set(event_types))


# --- endpoints ---------------------------------------------------------------------------------


def create_endpoint(
    *, owner: AbstractBaseUser, url: str, event_types: list[str], description: str = ""
) -> WebhookEndpoint:
    """Register an endpoint with a fresh secret (the caller shows it once)."""
    check_endpoint_url(url)
    event_types = check_event_types(event_types)
    now = timezone.now()
    with transaction.atomic():
        return WebhookEndpoint.objects.create(
            owner=owner,
            url=url,
            secret=new_secret(),
            event_types=event_types,
            description=description,
            is_active=True,
            created_at=now,
            updated_at=now,
        )


def update_endpoint(
    *,
    endpoint: WebhookEndpoint,
    url: str | None = None,
    event_types: list[str] | None = None,
    is_active: bool | None = None,
    description: str | None = None,
) -> WebhookEndpoint:
    changes: dict[str, Any] = {}
    if url is not None:
        changes["url"] = check_endpoint_url(url)
    if event_types is not None:
        changes["event_types"] = check_event_types(event_types)
    if is_active is not None:
        changes["is_active"] = is_active
    if description is not None:
        changes["description"] = description
    changes["updated_at"] = timezone.now()
    with transaction.atomic():
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(**changes)
    for name, value in changes.items():
        setattr(endpoint, name, value)
    return endpoint


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def rotate_secret(*, endpoint: WebhookEndpoint, overlap: timedelta | None = None) -> str:
    """Give `endpoint` a new signing secret and return it (the caller shows it once).  The
    old one keeps signing beside it for `overlap` (PARTNER_WEBHOOK_SECRET_OVERLAP_HOURS by
    default), so deliveries verify with either while the partner switches.  Rotating again
    during an overlap ends the older one at once: never more than two live secrets."""
    overlap = overlap if overlap is not None else timedelta(hours=cfg()["SECRET_OVERLAP_HOURS"])
    fresh = new_secret()
    now = timezone.now()
    with transaction.atomic():
        locked = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        changes = {
            "previous_secret_sealed": locked.secret_sealed,
            "previous_secret_expires_at": now + overlap,
            "secret_sealed": seal(fresh),
            "updated_at": now,
        }
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(**changes)
    for name, value in changes.items():
        setattr(endpoint, name, value)
    return fresh


def delete_endpoint(*, endpoint: WebhookEndpoint) -> None:
    with transaction.atomic():
        WebhookEndpoint.objects.filter(pk=endpoint.pk).delete()


# --- deciding deliveries (outbox consumer) -----------------------------------------------------


RECEIVE_ALL_BOOKINGS = "partners.receive_all_bookings"


def _may_see(endpoint: WebhookEndpoint, booking_owner_id: int | None) -> bool:
    # Endpoints of a user granted `receive_all_bookings` (the operator's own CRM) hear every
    # booking; anyone else, staff included, only about the bookings they own.  A permission,
    # not is_staff: a gate scanner is staff and may manage its own endpoint.
    if endpoint.owner_id == booking_owner_id:
        return True
    return endpoint.owner.is_active and endpoint.owner.has_perm(RECEIVE_ALL_BOOKINGS)


def public_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """An engine event as partners see it: the engine's `saleId` stays, and the catalogue item
    that owns the sale is named beside it in the catalogue's own words (`flightId`,
    `eventId`), the ids every other API of ours speaks.  The catalogue registry answers: the
    partners sit below the catalogues and import none of them."""
    if "saleId" not in payload:
        return payload
    sale = (
        Sale.objects.select_related(*catalogue.owner_paths()).filter(pk=payload["saleId"]).first()
    )
    owned = catalogue.owner_item(sale) if sale is not None else None
    if owned is None:
        return payload
    owner, item = owned
    return {**payload, f"{owner}Id": item.pk}


def _active_endpoints() -> list[WebhookEndpoint]:
    # Read once per relay batch (kernel.outbox.batch_read), not once per event (issue 26).
    return list(WebhookEndpoint.objects.select_related("owner").filter(is_active=True))


def queue_deliveries(*, event: OutboxEvent) -> list[int]:
    """One delivery per subscribed, active endpoint for `event`; idempotent.  Call inside the
    relay's transaction: the POSTs are queued for after its commit."""
    endpoints = [
        e
        for e in batch_read("partners.active_endpoints", _active_endpoints)
        if event.event_type in e.event_types
    ]
    if not endpoints:  # most events: no partner subscribes, and the booking is not read
        return []
    booking_id = event.payload.get("bookingId")
    owner_id = (
        Booking.objects.filter(pk=booking_id).values_list("customer_id", flat=True).first()
        if booking_id is not None
        else None
    )
    endpoints = [e for e in endpoints if _may_see(e, owner_id)]
    if not endpoints:
        return []
    event_id = partner_event_id(event)
    data = public_payload(event.payload)
    now = timezone.now()
    with transaction.atomic():
        WebhookDelivery.objects.bulk_create(
            [
                WebhookDelivery(
                    endpoint=endpoint,
                    event_id=event_id,
                    outbox_event_id=event.pk,
                    event_type=event.event_type,
                    occurred_at=event.created_at,
                    data=data,
                    status=DeliveryStatus.PENDING,
                    created_at=now,
                    updated_at=now,
                )
                for endpoint in endpoints
            ],
            ignore_conflicts=True,
        )
        ids = list(
            WebhookDelivery.objects.filter(
                event_id=event_id, endpoint__in=endpoints, status=DeliveryStatus.PENDING
            ).values_list("pk", flat=True)
        )
        for pk in ids:
            transaction.on_commit(partial(dispatch_delivery, pk), robust=True)
    return ids


def dispatch_delivery(delivery_id: int, countdown: float | None = None) -> None:
    from partners.tasks import deliver_webhook

    deliver_webhook.apply_async((delivery_id,), countdown=countdown, retry=False)


# --- delivering --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryAttempt:
    delivery_id: int
    status: str
    response_code: int | None
    retry_in: float | None  # seconds until the next attempt; None when done


def backoff_seconds(attempts: int) -> float:
    return min(
        cfg()["BACKOFF_BASE_SECONDS"] * 2 ** max(attempts - 1, 0), cfg()["BACKOFF_MAX_SECONDS"]
    )


def delivery_body(delivery: WebhookDelivery) -> bytes:
    """The same bytes on every attempt (only the signature's timestamp changes)."""
    body = {
        "id": str(delivery.event_id),
        "type": delivery.event_type,
        "createdAt": delivery.occurred_at.isoformat(),
        "data": delivery.data,
    }
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def attempt_delivery(*, delivery_id: int, now: datetime | None = None) -> DeliveryAttempt | None:
    """Claim a due delivery, POST it (outside any transaction), write down the answer.

    None when there was nothing to do: delivered, given up, not yet due, or being sent by
    another worker (a SENDING row older than STALE_AFTER counts as abandoned and is claimed).
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=cfg()["STALE_AFTER_SECONDS"])
    with transaction.atomic():
        claimed = (
            WebhookDelivery.objects.filter(pk=delivery_id)
            .filter(
                Q(status=DeliveryStatus.PENDING, next_attempt_at__isnull=True)
                | Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
                | Q(status=DeliveryStatus.SENDING, updated_at__lt=stale)
            )
            .update(status=DeliveryStatus.SENDING, attempts=F("attempts") + 1, updated_at=now)
        )
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    code, error = _post(delivery)
    return _record_answer(delivery, code=code, error=error)


def _post(delivery: WebhookDelivery) -> tuple[int | None, str]:
    import requests

    endpoint = delivery.endpoint
    if not endpoint.is_active:
        return None, "endpoint deactivated"
    try:
        target = delivery_target(endpoint.url)
    except InvalidRequest as exc:
        return None, f"refused: {exc.detail}"
    body = delivery_body(delivery)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Seatkeeper-Webhooks/1",
        SIGNATURE_HEADER: signatures_header(
            body=body, secrets=endpoint.live_secrets(now=timezone.now())
        ),
        EVENT_ID_HEADER: str(delivery.event_id),
        EVENT_TYPE_HEADER: delivery.event_type,
        ATTEMPT_HEADER: str(delivery.attempts),
    }
    try:
        # To the checked address only (no second DNS answer, no environment proxy), and no
        # redirects: a 30x to an internal address would get round the URL check.
        with pinned_session(target) as session:
            response = session.post(
                target.url,
                data=body,
                headers=headers,
                timeout=cfg()["TIMEOUT_SECONDS"],
                allow_redirects=False,
            )
    except requests.RequestException as exc:
        return None, type(exc).__name__
    return response.status_code, "" if 200 <= response.status_code < 300 else "non-2xx answer"


def _record_answer(delivery: WebhookDelivery, *, code: int | None, error: str) -> DeliveryAttempt:
    now = timezone.now()
    mine = WebhookDelivery.objects.filter(
        pk=delivery.pk, status=DeliveryStatus.SENDING, attempts=delivery.attempts
    )
    if not error:
        mine.update(
            status=DeliveryStatus.DELIVERED,
            last_response_code=code,
            last_error="",
            delivered_at=now,
            next_attempt_at=None,
            updated_at=now,
        )
        return DeliveryAttempt(delivery.pk, DeliveryStatus.DELIVERED, code, None)
    metrics.count("webhook_delivery_failed", event_type=delivery.event_type)
    permanent = error == "endpoint deactivated" or error.startswith("refused")
    if permanent or delivery.attempts >= cfg()["MAX_ATTEMPTS"]:
        mine.update(
            status=DeliveryStatus.FAILED,
            last_response_code=code,
            last_error=error[:2000],
            next_attempt_at=None,
            updated_at=now,
        )
        logger.warning(
            "webhook delivery %s gave up after %s attempts: %s",
            delivery.pk,
            delivery.attempts,
            error,
        )
        return DeliveryAttempt(delivery.pk, DeliveryStatus.FAILED, code, None)
    retry_in = backoff_seconds(delivery.attempts)
    mine.update(
        status=DeliveryStatus.PENDING,
        last_response_code=code,
        last_error=error[:2000],
        next_attempt_at=now + timedelta(seconds=retry_in),
        updated_at=now,
    )
    logger.info(
        "webhook delivery %s attempt %s failed (%s); retry in %.1fs",
        delivery.pk,
        delivery.attempts,
        code or error,
        retry_in,
    )
    return DeliveryAttempt(delivery.pk, DeliveryStatus.PENDING, code, retry_in)


def resend_due_deliveries(*, now: datetime | None = None, limit: int = 500) -> int:
    """Safety net for what the queue lost: PENDING rows overdue by STALE_AFTER (their retry
    message vanished) and SENDING rows older than that (their worker died mid-POST)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=cfg()["STALE_AFTER_SECONDS"])
    ids = list(
        WebhookDelivery.objects.filter(
            Q(status=DeliveryStatus.PENDING, next_attempt_at__lte=cutoff)
            | Q(status=DeliveryStatus.PENDING, next_attempt_at__isnull=True, updated_at__lt=cutoff)
            | Q(status=DeliveryStatus.SENDING, updated_at__lt=cutoff)
        )
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )
    for pk in ids:
        dispatch_delivery(pk)
    return len(ids)


def retry_delivery(*, delivery_id: int) -> bool:
    """An operator sends a FAILED delivery again (admin action)."""
    now = timezone.now()
    with transaction.atomic():
        won = WebhookDelivery.objects.filter(pk=delivery_id, status=DeliveryStatus.FAILED).update(
            status=DeliveryStatus.PENDING, next_attempt_at=None, attempts=0, updated_at=now
        )
        if won:
            transaction.on_commit(partial(dispatch_delivery, delivery_id), robust=True)
    return bool(won)
