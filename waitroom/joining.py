"""Joining a waiting room's queue: the join limits, a place taken once per account and room,
and queueing again once an admission ran out (docs/architecture.md, "Waiting room").

PostgreSQL holds the record; Redis holds the index over it and is written only after the
PostgreSQL transaction commits.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.errors import EmailNotVerified
from accounts.selectors import has_verified_email
from kernel.web.client_ip import address_prefix
from waitroom import presale, proof_of_work, queue
from waitroom.errors import ProofOfWorkRequired, QueueClosed, RoomNotFound, TooManyJoins
from waitroom.models import QueueEntry, QueueStatus, WaitingRoom
from waitroom.order_keys import in_lane, next_fifo_key

logger = logging.getLogger(__name__)


def _check_join_limits(*, customer_id: int, address: str | None) -> None:
    limits = settings.WAITING_ROOM
    waits = [
        queue.count_attempt(
            "account", str(customer_id), limit=limits["JOINS_PER_ACCOUNT_PER_MINUTE"]
        )
    ]
    if address:
        waits.append(
            queue.count_attempt("address", address, limit=limits["JOINS_PER_ADDRESS_PER_MINUTE"])
        )
    wait = max((w for w in waits if w), default=None)
    if wait:
        raise TooManyJoins(retry_after=wait)


def join_queue(
    *,
    room_id: int,
    customer: AbstractBaseUser,
    address: str | None = None,
    presale_code: str | None = None,
    proof: tuple[str, str] | None = None,
    now: datetime | None = None,
) -> QueueEntry:
    """Take a place in the queue, or keep the one you have.

    One row per account and room (a UNIQUE constraint): joining again returns the same
    place.  Before the shuffle the entry goes into the pre-queue (no order key yet); after
    it, to the back of the FIFO queue.  An admission that ran out may queue again, at the
    back.  Redis is asked first (join limits, index), so with Redis down nothing is written
    and the caller gets 503.  A room with `require_verified_email` refuses (403) an account
    whose address is not verified (docs/security.md, "Sign-up limits and e-mail
    verification").  A sold-out room (`sold_out_at`) takes no new places (409 `queue-sold-out`).
    A `presale_code` redeems it and queues in the priority lane (`waitroom.presale`).  A room
    with `require_proof_of_work` takes a new place only with a solved challenge, `proof` =
    (challenge, solution): 403 `proof-of-work-required` without, 400 if it does not pass.
    """
    now = now or timezone.now()
    _check_join_limits(customer_id=customer.pk, address=address)
    room = WaitingRoom.objects.filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound(f"There is no waiting room {room_id}.")
    if room.require_verified_email and not has_verified_email(customer):
        raise EmailNotVerified()
    queue.ensure_index(room.pk)
    entry = QueueEntry.objects.filter(room=room, customer=customer).first()
    if room.sold_out_at is not None and (entry is None or entry.status != QueueStatus.WAITING):
        # Sold out: nobody new queues for nothing; those waiting keep their place.
        raise QueueClosed()
    if room.require_proof_of_work and (entry is None or entry.status != QueueStatus.WAITING):
        # A new place costs a solved challenge (proof_of_work.py); a kept place costs nothing.
        if not proof:
            raise ProofOfWorkRequired(room_id=room.pk)
        proof_of_work.spend_proof(
            room=room, customer=customer, challenge=proof[0], solution=proof[1], now=now
        )
    if presale_code:
        entry = presale.enter_priority_lane(
            room=room, customer=customer, code=presale_code, address=address, now=now
        )
    elif entry is None:
        entry = _create_entry(room=room, customer=customer, address=address, now=now)
    elif entry.status == QueueStatus.ADMITTED and entry.admission_expires_at <= now:
        entry = _queue_again(entry=entry, room=room, now=now)
    if entry.status == QueueStatus.WAITING:
        # Idempotent: re-indexing on every join also repairs an index write lost to a
        # Redis hiccup right after an earlier join committed.
        if entry.order_key is None:
            queue.add_pre(room.pk, entry.pk, entry.joined_at.timestamp())
        else:
            queue.add(room.pk, [(entry.pk, entry.order_key)])
            _promise_eta(room=room, entry=entry, now=now)
    return entry


def _promise_eta(*, room: WaitingRoom, entry: QueueEntry, now: datetime) -> None:
    """Note when the page first says this place will be let in (the staff panel compares
    it with when it was): its place at the rate now.  Pre-queue places get none."""
    if entry.eta_promised_at is not None or room.paused:
        return
    ahead = queue.rank(room.pk, entry.pk)
    if ahead is None:
        return
    promised = now + timedelta(seconds=math.ceil((ahead + 1) * 60 / room.admit_per_minute))
    QueueEntry.objects.filter(pk=entry.pk, eta_promised_at__isnull=True).update(
        eta_promised_at=promised
    )


def _create_entry(
    *, room: WaitingRoom, customer: AbstractBaseUser, address: str | None, now: datetime
) -> QueueEntry:
    try:
        with transaction.atomic():
            return QueueEntry.objects.create(
                room=room,
                sale_id=room.sale_id,
                customer=customer,
                order_key=next_fifo_key() if room.shuffled_at else None,
                joined_at=now,
                joined_from=address,
                joined_prefix=address_prefix(address),
            )
    except IntegrityError:
        # The same account joined twice at once: the other request's row is the place.
        return QueueEntry.objects.get(room=room, customer=customer)


def _queue_again(*, entry: QueueEntry, room: WaitingRoom, now: datetime) -> QueueEntry:
    with transaction.atomic():
        order_key = in_lane(next_fifo_key(), entry.lane) if room.shuffled_at else None
        won = QueueEntry.objects.filter(
            pk=entry.pk, status=QueueStatus.ADMITTED, admission_expires_at__lte=now
        ).update(
            status=QueueStatus.WAITING, order_key=order_key, joined_at=now, eta_promised_at=None
        )
    entry.refresh_from_db()
    if not won:
        logger.info("queue entry %s re-queued concurrently", entry.pk)
    return entry
