"""Idempotency-Key: one write per (customer, key), whatever the network does.

The rules, shared by holds (`POST /api/bookings`, the seat picker) and payments:

* the key is the client's (a UUID per intended write, at most 255 characters), scoped to the
  customer: two customers never see each other's answers;
* the same key with the same request replays the stored answer (`replayed=True`, the API adds
  `Idempotent-Replayed: true`); nothing is written a second time;
* the same key with a different request is 422 (`IdempotencyKeyReused`);
* the same key while the first request is still running is 409 (`IdempotencyKeyInFlight`).

A client that got a 5xx, a timeout or no answer at all retries with the same key: if the write
committed, the retry is its answer; if not, the retry performs it.  Errors (sold out, bad
input) are not stored, so retrying a refused hold asks again.

Holds store the key in `IdempotencyRecord`, written in the hold's own transaction (`run_once`),
as a row of the sale the request names: a hold key is one per (sale, customer, scope), so the
same key sent for another sale is a new request there (a sale's rows live on one node of a
cluster distributed by sale; docs/performance.md, "Beyond one primary").
Payments keep key, fingerprint and answer on the payment row, committed before the gateway is
called, and use `clean_key`, `fingerprint` and `replay` from here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac
from django.utils.translation import gettext

from kernel.errors import IdempotencyKeyInFlight, IdempotencyKeyMissing, IdempotencyKeyReused
from kernel.models import IdempotencyRecord

MAX_KEY_LENGTH = 255
M = TypeVar("M", bound=models.Model)


@dataclass(frozen=True)
class IdempotentResult:
    status: int
    body: dict[str, Any]
    replayed: bool = False


def clean_key(raw: str | None, *, required: bool, what: str = "request") -> str | None:
    key = (raw or "").strip()
    if not key:
        if required:
            raise IdempotencyKeyMissing(
                gettext("Send an Idempotency-Key header (e.g. a UUID) with every %(what)s.")
                % {"what": what}
            )
        return None
    if len(key) > MAX_KEY_LENGTH:
        raise IdempotencyKeyMissing(
            gettext("An Idempotency-Key is at most %(limit)s characters.")
            % {"limit": MAX_KEY_LENGTH}
        )
    return key


def fingerprint(request: dict[str, Any], *, key: str | None = None) -> str:
    """A stable digest of what was asked (already normalised by the caller).

    A keyed HMAC, never a plain hash: a request may carry something guessable (a sandbox test
    card number, a name), and an unsalted SHA-256 of it is brute-forced in seconds.  `key`
    defaults to one derived from SECRET_KEY."""
    canonical = json.dumps(request, sort_keys=True, default=str).encode()
    if key is None:
        return salted_hmac("seatkeeper.idempotency", canonical, algorithm="sha256").hexdigest()
    return hmac.new(key.encode(), canonical, hashlib.sha256).hexdigest()


def replay(
    *,
    stored_fingerprint: str,
    response_status: int | None,
    response_body: dict[str, Any] | None,
    request_fingerprint: str,
    what: str = "request",
) -> IdempotentResult:
    """The answer to a key seen before: the stored one, 422 for another request, 409 while
    the first is still running."""
    if stored_fingerprint != request_fingerprint:
        raise IdempotencyKeyReused(
            gettext("This Idempotency-Key was already used for a different %(what)s request.")
            % {"what": what}
        )
    if response_status is None:
        raise IdempotencyKeyInFlight(
            gettext("The first request with this Idempotency-Key is still running. Retry shortly.")
        )
    return IdempotentResult(response_status, response_body or {}, replayed=True)


def _stored(
    sale_id: int, customer: AbstractBaseUser, scope: str, key: str
) -> IdempotencyRecord | None:
    return IdempotencyRecord.objects.filter(
        sale_id=sale_id, customer=customer, scope=scope, key=key
    ).first()


def _replay_record(record: IdempotencyRecord, request_fingerprint: str, what: str):
    return replay(
        stored_fingerprint=record.request_fingerprint,
        response_status=record.response_status,
        response_body=record.response_body,
        request_fingerprint=request_fingerprint,
        what=what,
    )


def _lock_key(sale_id: int, customer_id: int, scope: str, key: str) -> int:
    digest = hashlib.sha256(f"idempotency:{sale_id}:{scope}:{customer_id}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _claim(sale_id: int, customer_id: int, scope: str, key: str) -> None:
    """Inside the write's transaction: be the only request running with this key, or 409.

    A transaction-scoped advisory lock, so a crash or a dropped connection frees it with the
    transaction: a key can never be stuck "in flight".  SQLite (embedded mode) serialises
    writers with IMMEDIATE transactions already."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(%s)", [_lock_key(sale_id, customer_id, scope, key)]
        )
        if not cursor.fetchone()[0]:
            raise IdempotencyKeyInFlight(
                gettext(
                    "The first request with this Idempotency-Key is still running. Retry shortly."
                )
            )


def run_once(
    *,
    sale_id: int,
    customer: AbstractBaseUser,
    scope: str,
    key: str,
    request_fingerprint: str,
    write: Callable[[], M],
    answer: Callable[[M], tuple[int, dict[str, Any]]],
    what: str = "request",
) -> IdempotentResult:
    """Perform `write` at most once per (sale, customer, scope, key) and remember `answer`.

    The record is inserted in the write's transaction: either both commit (and every retry
    gets this answer) or neither does (and a retry performs the write).  `write` runs in a
    savepoint of that transaction, so its own `transaction.atomic()` and on-commit side
    effects behave as usual."""
    record = _stored(sale_id, customer, scope, key)
    if record is not None:
        return _replay_record(record, request_fingerprint, what)
    try:
        with transaction.atomic():
            _claim(sale_id, customer.pk, scope, key)
            # Another request may have committed between our look and our claim.
            record = _stored(sale_id, customer, scope, key)
            if record is not None:
                return _replay_record(record, request_fingerprint, what)
            resource = write()
            status, body = answer(resource)
            IdempotencyRecord.objects.create(
                sale_id=sale_id,
                customer=customer,
                scope=scope,
                key=key,
                request_fingerprint=request_fingerprint,
                response_status=status,
                response_body=body,
                resource_type=resource._meta.label_lower,
                resource_id=str(resource.pk),
                created_at=timezone.now(),
            )
    except IntegrityError:
        # Only without the advisory lock (SQLite) can two inserts race; the other one won.
        record = _stored(sale_id, customer, scope, key)
        if record is None:
            raise
        return _replay_record(record, request_fingerprint, what)
    return IdempotentResult(status, body)


def purge_idempotency_records(*, now: datetime | None = None) -> int:
    """Forget hold keys older than the retention period (the same as payments' keys)."""
    cutoff = (now or timezone.now()) - settings.PAYMENTS["IDEMPOTENCY_KEY_RETENTION"]
    with transaction.atomic():
        deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
