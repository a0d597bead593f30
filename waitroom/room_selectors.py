"""Reads of the waiting room: a customer's place, a room's live figures, the shuffle."""

from __future__ import annotations

import hashlib
import hmac
import math
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Exists, F, OuterRef, Sum
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_noop

from bookings import catalogue
from bookings.models import Booking, BookingStatus
from bookings.models import Inventory as EngineInventory
from waitroom import queue
from waitroom.models import QueueEntry, QueueStatus, StockState, WaitingRoom
from waitroom.tokens import issue_token

SHUFFLE_ALGORITHM = gettext_noop(
    "Pre-queue customers are ordered by HMAC-SHA256(key=seed as ASCII hex, "
    "message='<room id>:<customer id>') ascending (hex digest), ties by customer id; "
    "the first gets order key 1."
)


def shuffle_key(*, seed: str, room_id: int, customer_id: int) -> str:
    return hmac.new(seed.encode(), f"{room_id}:{customer_id}".encode(), hashlib.sha256).hexdigest()


def shuffle_order(*, seed: str, room_id: int, customer_ids: list[int]) -> list[int]:
    """The published algorithm: anyone with the seed and the list of customers re-derives
    the order."""
    return sorted(
        customer_ids,
        key=lambda c: (shuffle_key(seed=seed, room_id=room_id, customer_id=c), c),
    )


# --- which sales have a waiting room --------------------------------------------------------


def room_of_sale(*, sale_id: int) -> int | None:
    """The waiting room in front of the engine's sale `sale_id` (a flight's, an event's), if
    any: one indexed query (the unique index on sale).  The hold path asks
    `waitroom.protection`, which caches this answer and retires it whenever a waiting room
    changes: a stale "unprotected" answer would let holds past the waiting room at the very
    on-sale moment it exists for."""
    return WaitingRoom.objects.filter(sale_id=sale_id).values_list("id", flat=True).first()


class RoomState:
    """What a room's summary says it is doing now (not a stored state: derived from the
    on-sale time and the pause switch)."""

    PREQUEUE = "PREQUEUE"  # before `opensAt`: joining takes a place in the pre-queue
    OPEN = "OPEN"  # admitting in queue order
    PAUSED = "PAUSED"  # staff stopped admission; places are kept


def room_state(*, room: WaitingRoom, now: datetime | None = None) -> str:
    if room.paused:
        return RoomState.PAUSED
    return RoomState.PREQUEUE if (now or timezone.now()) < room.opens_at else RoomState.OPEN


def room_summary(room: WaitingRoom) -> dict:
    """The room as the flight and event answers carry it: enough to find and join it."""
    return {
        "room_id": room.pk,
        "state": room_state(room=room),
        "opens_at": room.opens_at,
        "room_url": reverse("waitroom_api:room", args=[room.pk]),
        "queue_url": reverse("waitroom_api:queue", args=[room.pk]),
        "websocket_url": f"/ws/waiting-room/{room.pk}/",
        "page_url": reverse("waitroom:queue", args=[room.pk]),
    }


def waitlist_classes(*, room: WaitingRoom) -> list[tuple[str, str]]:
    """(code, label) of the inventory classes of the sale behind the waiting room (a flight's
    fare classes, an event's price categories and standing areas): what its queue's
    one-click waitlist may be joined for, named by the sale's own catalogue."""
    codes = (
        EngineInventory.objects.filter(sale_id=room.sale_id)
        .order_by("fare_class")
        .values_list("fare_class", flat=True)
    )
    return [(code, catalogue.describe_class(room.sale, code)) for code in codes]


# --- figures --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Inventory:
    sold: int
    held: int
    left: int


def inventory_of(*, room: WaitingRoom) -> Inventory:
    totals = EngineInventory.objects.filter(sale_id=room.sale_id).aggregate(
        total_sold=Sum("sold"),
        total_held=Sum("held"),
        total_left=Sum(F("capacity") + F("overbook_limit") - F("sold") - F("held")),
    )
    return Inventory(
        totals["total_sold"] or 0, totals["total_held"] or 0, max(totals["total_left"] or 0, 0)
    )


def stock_state(inventory: Inventory) -> StockState:
    if inventory.left > 0:
        return StockState.AVAILABLE
    return StockState.ALL_HELD if inventory.held > 0 else StockState.SOLD_OUT


def stock_facts(inventory: Inventory, *, at: datetime) -> dict:
    """The wire's words for the stock (the tick's state, the snapshot, the sell-out push).
    Always from PostgreSQL's inventory rows: the Redis availability counter in front of
    the hold may drift by design (bookings/availability.py) and is never shown."""
    state = stock_state(inventory)
    return {
        "unitsLeft": inventory.left,
        "unitsHeld": inventory.held,
        "stock": state.value,
        "soldOut": state == StockState.SOLD_OUT,
        # When PostgreSQL was read: a page keeps the newer of two readings that cross.
        "stockAt": at.timestamp(),
    }


SOLD_OUT_FACTS = {"unitsLeft": 0, "unitsHeld": 0, "stock": StockState.SOLD_OUT.value}


def newer_stock(mine: dict, update: dict) -> dict:
    """`update` with the stock facts of `mine` when those were read later (a tick's message
    read before the sale that a sell-out push already announced)."""
    if mine.get("stockAt", 0) > update.get("stockAt", 0):
        return {**update, **{name: mine[name] for name in STOCK_FIELDS if name in mine}}
    return update


def shopping_count(*, room: WaitingRoom, now: datetime) -> int:
    """Admitted, still inside, and without a live booking on the sale: the people who may
    still take units.  (Once they hold, their units are counted in `held`.)"""
    booked = Booking.objects.filter(
        customer_id=OuterRef("customer_id"),
        sale_id=room.sale_id,
        status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED],
    )
    return (
        QueueEntry.objects.filter(
            room=room, status=QueueStatus.ADMITTED, admission_expires_at__gt=now
        )
        .exclude(Exists(booked))
        .count()
    )


def horizon_people(*, units_left: int, shopping: int) -> int:
    """How many more people may be admitted under the inventory bound."""
    return max(0, math.floor(settings.WAITING_ROOM["HORIZON_FACTOR"] * units_left) - shopping)


@dataclass(frozen=True)
class RoomFigures:
    waiting: int | None
    prequeue: int | None
    admitted: int
    inside: int
    sold: int
    left: int
    eta_seconds: int | None
    paused: bool


def room_figures(*, room: WaitingRoom, now: datetime | None = None) -> RoomFigures:
    """For staff: waiting (None while Redis is unreachable), admitted so far, shopping
    inside, units sold and left, and the ETA of the last person in line."""
    now = now or timezone.now()
    try:
        waiting, pre = queue.counts(room.pk)
    except Exception:  # the admin page must still render while Redis is down
        waiting = pre = None
    inventory = inventory_of(room=room)
    shopping = shopping_count(room=room, now=now)
    eta = None
    if waiting and not room.paused:
        horizon = horizon_people(units_left=inventory.left, shopping=shopping)
        if waiting <= horizon:
            eta = math.ceil(waiting * 60 / room.admit_per_minute)
    return RoomFigures(
        waiting=waiting,
        prequeue=pre,
        admitted=room.admissions.count(),
        inside=shopping,
        sold=inventory.sold,
        left=inventory.left,
        eta_seconds=eta,
        paused=room.paused,
    )


# --- a customer's place ---------------------------------------------------------------------


def describe_place(*, position: int, state: dict | None) -> dict:
    """What the queue page says at `position` (1-based), given the last tick's state.  Shared
    by the HTTP snapshot and the websocket consumer, so both say the same thing."""
    state = state or {}
    horizon = state.get("horizon")
    paused = bool(state.get("paused"))
    interval = state.get("interval")
    # Sold out: nothing reaches any place in the queue; the waitlist is the only way on.
    unlikely = (horizon is not None and position > horizon) or bool(state.get("soldOut"))
    eta = None
    if interval and not paused and not unlikely:
        eta = math.ceil(position * interval)
    return {
        "status": QueueStatus.WAITING.value,
        "position": position,
        "ahead": position - 1,
        "etaSeconds": eta,
        "unlikely": unlikely,
        "paused": paused,
        **stock_facts_of_state(state),
    }


def utc_text(moment: datetime) -> str:
    """An instant as the rest of the API writes it (DRF's format): UTC with `Z`."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def stock_facts_of_state(state: dict) -> dict:
    """The stock as the last tick read it from PostgreSQL (empty before the first tick)."""
    return {name: state[name] for name in STOCK_FIELDS if name in state}


STOCK_FIELDS = ("unitsLeft", "unitsHeld", "stock", "soldOut", "stockAt")


def queue_status(*, room: WaitingRoom, customer_id: int, now: datetime | None = None) -> dict:
    """A customer's snapshot (also the polling endpoint's body).  The rank and `version` are
    read atomically (they are also written atomically by the tick), so a page applies
    exactly the messages after it.  Raises
    QueueUnavailable only for waiting customers while Redis is down."""
    now = now or timezone.now()
    entry = QueueEntry.objects.filter(room=room, customer_id=customer_id).first()
    base = {
        "roomId": room.pk,
        # The wire keeps its old name too: `saleId` here is the room's id (docs/api.md).
        "saleId": room.pk,
        "opensAt": utc_text(room.opens_at),
        "seedCommitment": room.seed_commitment,
        "seed": room.seed_published,
        # Sold out: the queue takes no new joins (PostgreSQL's word, the room row).
        "queueClosed": room.sold_out_at is not None,
    }
    if room.sold_out_at is not None:
        base.update(SOLD_OUT_FACTS, soldOut=True, stockAt=room.sold_out_at.timestamp())
    if entry is None:
        return {**base, "status": "NOT_JOINED"}
    base["entryId"] = entry.pk
    base["orderKey"] = entry.order_key
    base["lane"] = entry.lane
    if entry.status == QueueStatus.ADMITTED:
        if entry.admission_expires_at <= now:
            return {**base, "status": "EXPIRED"}
        return {
            **base,
            "status": QueueStatus.ADMITTED.value,
            "token": issue_token(
                room_id=room.pk,
                customer_id=customer_id,
                expires_at=entry.admission_expires_at,
            ),
            "expiresAt": utc_text(entry.admission_expires_at),
            "enterUrl": f"/waiting-room/{room.pk}/enter/",
        }
    queue.ensure_index(room.pk)
    if entry.order_key is None:
        version = queue.current_version(room.pk)
        _waiting, pre = queue.counts(room.pk)
        state = queue.load_state(room.pk) or {}
        return {
            **stock_facts_of_state(state),
            **base,
            "status": "PREQUEUE",
            "prequeue": pre,
            "version": version,
        }
    return _waiting_place(room=room, entry=entry, base=base)


def _waiting_place(*, room: WaitingRoom, entry: QueueEntry, base: dict) -> dict:
    rank, version = queue.rank_and_version(room.pk, entry.pk)
    if rank is None:  # joined a moment ago and not indexed yet: count in PostgreSQL
        rank = QueueEntry.objects.filter(
            room=room, status=QueueStatus.WAITING, order_key__lt=entry.order_key
        ).count()
    place = newer_stock(
        base, {**base, **describe_place(position=rank + 1, state=queue.load_state(room.pk))}
    )
    return {
        **place,
        "unlikely": place["unlikely"] or place.get("soldOut", False),
        "version": version,
    }
