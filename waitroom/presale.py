"""Presale codes: staff issue them for a room; a code holder queues in the priority lane
(`waitroom.lanes`).  A code is single-use or counted, and each use binds it to the account
that redeemed it (`PresaleRedemption`, one per account and room), so a code passed on after
use is worth nothing (docs/architecture.md, "Priority lanes")."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F

from kernel.web.client_ip import address_prefix
from waitroom import queue
from waitroom.errors import PresaleCodeInvalid, PresaleCodeUsedUp
from waitroom.models import (
    Lane,
    PresaleCode,
    PresaleRedemption,
    QueueEntry,
    QueueStatus,
    WaitingRoom,
)
from waitroom.order_keys import in_lane, next_fifo_key


def issue_presale_codes(
    *, room_id: int, count: int, uses_allowed: int = 1, note: str = ""
) -> list[PresaleCode]:
    """`count` fresh codes for the room, each good for `uses_allowed` accounts."""
    with transaction.atomic():
        room = WaitingRoom.objects.get(pk=room_id)
        return [
            PresaleCode.objects.create(
                room=room, sale_id=room.sale_id, uses_allowed=uses_allowed, note=note
            )
            for _ in range(count)
        ]


def normalize_code(code: str) -> str:
    return "".join(code.split()).upper()


def claim_use(*, sale_id: int, code_id: int) -> bool:
    """One use of the code, if any is left: a conditional update, so of any number of
    accounts racing for the last use exactly one wins."""
    return bool(
        PresaleCode.objects.filter(sale_id=sale_id, pk=code_id, uses__lt=F("uses_allowed")).update(
            uses=F("uses") + 1
        )
    )


def enter_priority_lane(
    *, room: WaitingRoom, customer: AbstractBaseUser, code: str, address: str | None, now: datetime
) -> QueueEntry:
    """Redeem `code` for this account (once: an account that already redeemed one keeps its
    lane without using another) and take or move its place into the priority lane, in one
    transaction.  An unknown code is 400 `presale-code-invalid`; one used up by others, 409
    `presale-code-used-up`; nothing is written either way."""
    try:
        with transaction.atomic():
            redeemed = PresaleRedemption.objects.filter(
                sale_id=room.sale_id, room=room, customer=customer
            )
            if not redeemed.exists():
                _redeem(room=room, customer=customer, code=code, now=now)
            entry = _priority_place(room=room, customer=customer, address=address, now=now)
    except IntegrityError:
        # The same account redeemed or joined twice at once: the other request won; its
        # redemption and place are the ones kept (and this one's use was rolled back).
        entry = QueueEntry.objects.get(sale_id=room.sale_id, room=room, customer=customer)
    return entry


def _redeem(*, room: WaitingRoom, customer: AbstractBaseUser, code: str, now: datetime) -> None:
    presale = PresaleCode.objects.filter(
        sale_id=room.sale_id, room=room, code=normalize_code(code)
    ).first()
    if presale is None:
        raise PresaleCodeInvalid()
    if not claim_use(sale_id=room.sale_id, code_id=presale.pk):
        raise PresaleCodeUsedUp()
    PresaleRedemption.objects.create(
        room=room, sale_id=room.sale_id, code=presale, customer=customer, redeemed_at=now
    )


def _priority_place(
    *, room: WaitingRoom, customer: AbstractBaseUser, address: str | None, now: datetime
) -> QueueEntry:
    entry = (
        QueueEntry.objects.select_for_update()
        .filter(sale_id=room.sale_id, room=room, customer=customer)
        .first()
    )
    order_key = in_lane(next_fifo_key(), Lane.PRIORITY) if room.shuffled_at else None
    if entry is None:
        entry = QueueEntry.objects.create(
            room=room,
            sale_id=room.sale_id,
            customer=customer,
            lane=Lane.PRIORITY,
            order_key=order_key,
            joined_at=now,
            joined_from=address,
            joined_prefix=address_prefix(address),
        )
        if order_key is not None:  # ahead of every general place: the pages re-read
            transaction.on_commit(lambda: queue.mark_lane_change(room.pk), robust=True)
        return entry
    if entry.lane == Lane.GENERAL and entry.status == QueueStatus.WAITING:
        # A general place moves to the back of the priority lane (still ahead of every
        # general place); in the pre-queue it stays unkeyed until the shuffle.
        entry.lane = Lane.PRIORITY
        if entry.order_key is not None:
            entry.order_key = order_key
        entry.save(update_fields=["lane", "order_key"])
        if entry.order_key is not None:
            transaction.on_commit(lambda: _reindex(room.pk, entry), robust=True)
    return entry


def _reindex(room_id: int, entry: QueueEntry) -> None:
    queue.add(room_id, [(entry.pk, entry.order_key)])
    queue.mark_lane_change(room_id)
