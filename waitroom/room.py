"""The waiting room's writes: join the queue, shuffle the pre-queue, admit by rate and by
inventory, pause and resume.  The rules, and why, are in docs/architecture.md ("Waiting
room").

PostgreSQL holds the record (who joined, in which order, who was admitted until when);
Redis holds the index over it and is written only after the PostgreSQL transaction commits.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Max
from django.utils import timezone

from accounts.errors import EmailNotVerified
from accounts.selectors import has_verified_email
from bookings import catalogue
from bookings.models import Sale
from waitroom import live, queue, room_selectors
from waitroom.errors import RoomNotFound, TooManyJoins
from waitroom.models import Admission, QueueEntry, QueueStatus, WaitingRoom

logger = logging.getLogger(__name__)

# Order keys: 1..n for the shuffled pre-queue, FIFO_BASE + a sequence number afterwards.
FIFO_BASE = 10**12


def _fifo_key() -> int:
    if connection.vendor != "postgresql":
        # SQLite (the embedded mode) has no sequences.  Each of its write transactions holds
        # the database's one write lock from BEGIN (IMMEDIATE, config/settings.py), and every
        # caller is inside one: the largest key + 1 cannot be handed out twice.
        top = QueueEntry.objects.aggregate(top=Max("order_key"))["top"] or 0
        return max(top, FIFO_BASE) + 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval('waitroom_queue_order_seq')")
        return FIFO_BASE + cursor.fetchone()[0]


def open_waiting_room(
    *,
    sale_id: int,
    opens_at: datetime,
    admit_per_minute: int,
    max_inside: int,
    stay_seconds: int = 600,
) -> WaitingRoom:
    """Put the engine's sale `sale_id` (a flight's, an event's) behind a new waiting room:
    from now on every hold on it needs an admission token (`waitroom.gate`)."""
    with transaction.atomic():
        return WaitingRoom.objects.create(
            sale_id=sale_id,
            opens_at=opens_at,
            admit_per_minute=admit_per_minute,
            max_inside=max_inside,
            stay_seconds=stay_seconds,
        )


# --- joining --------------------------------------------------------------------------------


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
    now: datetime | None = None,
) -> QueueEntry:
    """Take a place in the queue, or keep the one you have.

    One row per account and room (a UNIQUE constraint): joining again returns the same
    place.  Before the shuffle the entry goes into the pre-queue (no order key yet); after
    it, to the back of the FIFO queue.  An admission that ran out may queue again, at the
    back.  Redis is asked first (join limits, index), so with Redis down nothing is written
    and the caller gets 503.  A room with `require_verified_email` refuses (403) an account
    whose address is not verified (docs/security.md, "Sign-up limits and e-mail
    verification").
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
    if entry is None:
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
    return entry


def _create_entry(
    *, room: WaitingRoom, customer: AbstractBaseUser, address: str | None, now: datetime
) -> QueueEntry:
    try:
        with transaction.atomic():
            return QueueEntry.objects.create(
                room=room,
                customer=customer,
                order_key=_fifo_key() if room.shuffled_at else None,
                joined_at=now,
                joined_from=address,
            )
    except IntegrityError:
        # The same account joined twice at once: the other request's row is the place.
        return QueueEntry.objects.get(room=room, customer=customer)


def _queue_again(*, entry: QueueEntry, room: WaitingRoom, now: datetime) -> QueueEntry:
    with transaction.atomic():
        order_key = _fifo_key() if room.shuffled_at else None
        won = QueueEntry.objects.filter(
            pk=entry.pk, status=QueueStatus.ADMITTED, admission_expires_at__lte=now
        ).update(status=QueueStatus.WAITING, order_key=order_key, joined_at=now)
    entry.refresh_from_db()
    if not won:
        logger.info("queue entry %s re-queued concurrently", entry.pk)
    return entry


# --- the shuffle and the admission tick -----------------------------------------------------


@dataclass
class TickResult:
    room_id: int
    skipped: str | None = None
    shuffled: int | None = None
    admitted: list[int] = field(default_factory=list)
    horizon: int = 0
    shopping: int = 0
    units_left: int = 0


def _shuffle(room: WaitingRoom, now: datetime) -> int:
    """Order the pre-queue by the published algorithm; runs once, under the room lock."""
    rows = list(
        QueueEntry.objects.filter(
            room=room, status=QueueStatus.WAITING, order_key__isnull=True
        ).values_list("id", "customer_id")
    )
    by_customer = {customer_id: entry_id for entry_id, customer_id in rows}
    order = room_selectors.shuffle_order(
        seed=room.seed, room_id=room.pk, customer_ids=list(by_customer)
    )
    QueueEntry.objects.bulk_update(
        [QueueEntry(pk=by_customer[c], order_key=i) for i, c in enumerate(order, start=1)],
        ["order_key"],
        batch_size=1000,
    )
    room.shuffled_at, room.shuffled_count = now, len(order)
    return len(order)


def _key_late_arrivals(room: WaitingRoom) -> list[tuple[int, int]]:
    """Entries that joined the pre-queue while the shuffle was being drawn go to the back,
    in join order."""
    late = list(
        QueueEntry.objects.filter(room=room, status=QueueStatus.WAITING, order_key__isnull=True)
        .order_by("joined_at", "id")
        .values_list("id", flat=True)
    )
    keyed = []
    for entry_id in late:
        order_key = _fifo_key()
        QueueEntry.objects.filter(pk=entry_id, order_key__isnull=True).update(order_key=order_key)
        keyed.append((entry_id, order_key))
    return keyed


def _rate_budget(room: WaitingRoom, now: datetime) -> tuple[int, datetime, float]:
    """GCRA-style: the admission clock advances one interval per person admitted; credit
    older than max(BURST_SECONDS, one interval) lapses, so a pause or a quiet spell never
    builds up a burst."""
    interval = 60 / room.admit_per_minute
    window = max(settings.WAITING_ROOM["BURST_SECONDS"], interval)
    clock = room.admission_clock or room.opens_at
    start = max(clock, now - timedelta(seconds=window))
    budget = math.floor((now - start).total_seconds() / interval + 1e-9)
    return max(budget, 0), start, interval


def admit_shoppers(
    *, room_id: int, now: datetime | None = None, broadcast: bool = True
) -> TickResult:
    """One admission step for one room (`run_admission_tick` runs ADMISSION_STEPS of them
    per tick, spread over it; tests and staff tools call it directly).

    Admits min(rate budget, free places inside, inventory horizon) people from the front of
    the queue.  The horizon is floor(HORIZON_FACTOR x units left) minus those still shopping
    inside: nobody is let in who could only find it sold out.  Runs under the room's row
    lock taken with SKIP LOCKED, so overlapping ticks never admit twice.  Needs no Redis:
    while it is down admission goes on (the index and the pages catch up afterwards).

    After commit the admitted are told at once, each on their own channel.  With
    `broadcast` the step also takes everyone admitted since the last broadcast out of the
    Redis index and sends the one message that moves every waiting page; without it their
    removal is deferred to the tick's last step (a waiting page's place still counts them
    until then, consistently).
    """
    now = now or timezone.now()
    with transaction.atomic():
        room = WaitingRoom.objects.select_for_update(skip_locked=True).filter(pk=room_id).first()
        if room is None:
            return TickResult(room_id, skipped="busy or gone")
        if now < room.opens_at:
            return TickResult(room_id, skipped="not open yet")
        if not _engine_sale_open(room, now):
            # Closed, over or called off: nobody is let in to a sale that sells nothing.
            return TickResult(room_id, skipped="sale closed")
        result = TickResult(room_id)
        if room.shuffled_at is None:
            result.shuffled = _shuffle(room, now)
        late = _key_late_arrivals(room)
        inventory = room_selectors.inventory_of(room=room)
        shopping = room_selectors.shopping_count(room=room, now=now)
        horizon = room_selectors.horizon_people(units_left=inventory.left, shopping=shopping)
        budget, start, interval = _rate_budget(room, now)
        admitted: list[QueueEntry] = []
        room_inside = max(room.max_inside - shopping, 0)
        take = 0 if room.paused else min(budget, room_inside, horizon)
        if take > 0:
            # Who is next is read from PostgreSQL, the record, not from the Redis index:
            # admission goes on while Redis is down, and never trusts a stale index.
            admitted = list(
                QueueEntry.objects.select_for_update()
                .filter(room=room, status=QueueStatus.WAITING, order_key__isnull=False)
                .order_by("order_key")[:take]
            )
            _admit(room, admitted, now)
            room.admission_clock = start + timedelta(seconds=interval * len(admitted))
        room.save(update_fields=["shuffled_at", "shuffled_count", "admission_clock"])
        result.admitted = [e.pk for e in admitted]
        result.horizon = max(horizon - len(admitted), 0)
        result.shopping = shopping + len(admitted)
        result.units_left = inventory.left
        state = {
            "horizon": result.horizon,
            "paused": room.paused,
            "interval": interval,
            "unitsLeft": inventory.left,
            "shuffled": True,
        }
        transaction.on_commit(
            lambda: _publish_tick(
                room_id=room.pk,
                reshuffled=result.shuffled is not None,
                late=late,
                admitted=admitted,
                state=state,
                broadcast=broadcast,
            ),
            robust=True,
        )
    return result


def _engine_sale_open(room: WaitingRoom, now: datetime) -> bool:
    """The sale behind the waiting room is open, by its catalogue's one rule."""
    engine_sale = Sale.objects.select_related(*catalogue.owner_paths()).get(pk=room.sale_id)
    return catalogue.is_open(engine_sale, now=now)


def _admit(room: WaitingRoom, entries: list[QueueEntry], now: datetime) -> None:
    if not entries:
        return
    expires_at = now + timedelta(seconds=room.stay_seconds)
    won = QueueEntry.objects.filter(
        pk__in=[e.pk for e in entries], status=QueueStatus.WAITING
    ).update(status=QueueStatus.ADMITTED, admitted_at=now, admission_expires_at=expires_at)
    assert won == len(entries), "entries are locked: the update cannot lose"
    Admission.objects.bulk_create(
        [
            Admission(
                room=room,
                entry=e,
                customer_id=e.customer_id,
                order_key=e.order_key,
                admitted_at=now,
                expires_at=expires_at,
            )
            for e in entries
        ]
    )


def _publish_tick(
    *,
    room_id: int,
    reshuffled: bool,
    late: list[tuple[int, int]],
    admitted: list[QueueEntry],
    state: dict,
    broadcast: bool = True,
) -> None:
    """After commit: tell the admitted, mirror the step into Redis, and (with `broadcast`,
    or after a shuffle) tell every queue page."""
    live.publish_admitted(room_id=room_id, customer_ids=[e.customer_id for e in admitted])
    if reshuffled:
        queue.invalidate(room_id)
        queue.ensure_index(room_id)
    queue.add(room_id, late)
    pairs = [(e.pk, e.order_key) for e in admitted]
    if not (broadcast or reshuffled):
        queue.defer_removal(room_id, pairs)
        return
    # The state goes with the removals: a snapshot never pairs a place that still counts
    # the deferred with a horizon that already took them off.
    queue.save_state(room_id, state)
    version, removed = queue.remove_and_bump(room_id, pairs)
    live.publish_queue_moved(
        room_id=room_id,
        version=version,
        message={
            "resync": reshuffled,
            "removed": [order_key for _entry_id, order_key in removed],
            "admitted": [entry_id for entry_id, _order_key in removed],
            "state": state,
        },
    )


def admit_all_open_sales(
    *, now: datetime | None = None, broadcast: bool = True
) -> list[TickResult]:
    """One admission step for every waiting room whose queue has opened and whose sale is
    open (its catalogue's rule): a sale that closed, ended or was called off gets no more
    ticks, however many rooms were ever created."""
    now = now or timezone.now()
    results = []
    open_rooms = WaitingRoom.objects.filter(
        catalogue.open_sales_q(now=now, prefix="sale__"), opens_at__lte=now
    )
    for room_id in open_rooms.values_list("id", flat=True):
        try:
            results.append(admit_shoppers(room_id=room_id, now=now, broadcast=broadcast))
        except Exception:
            # One room's trouble (Redis down: QueueUnavailable) must not stop the others.
            logger.exception("admission tick for room %s failed", room_id)
    return results


def run_admission_tick(*, sleep=time.sleep, clock=time.monotonic) -> list[TickResult]:
    """The beat task's body, every TICK_SECONDS: ADMISSION_STEPS admission steps spread
    evenly over the tick, the last one broadcasting to the queue pages.

    Admitting a whole tick's worth at once sent every admitted shopper to the seat map and
    the hold in the same instant, on top of the broadcast to every waiting page; spread
    out, they arrive at the admission rate (docs/performance.md, scenario (w)), while the
    pages still get one message per tick.
    """
    steps = max(1, settings.WAITING_ROOM["ADMISSION_STEPS"])
    spacing = settings.WAITING_ROOM["TICK_SECONDS"] / steps
    started = clock()
    results: list[TickResult] = []
    for step in range(steps):
        if step:
            sleep(max(0.0, started + step * spacing - clock()))
        # Running late (a slow database): this step is the last, so a tick never outlasts
        # its slot and overlapping ticks never pile up in the worker.
        last = step == steps - 1 or clock() - started >= (steps - 1) * spacing
        results += admit_all_open_sales(broadcast=last)
        if last:
            break
    return results


# --- staff ----------------------------------------------------------------------------------


def pause_admission(*, room_id: int) -> bool:
    with transaction.atomic():
        return bool(WaitingRoom.objects.filter(pk=room_id, paused=False).update(paused=True))


def resume_admission(*, room_id: int, now: datetime | None = None) -> bool:
    """Resume; the rate clock restarts now, so the pause never turns into a burst."""
    now = now or timezone.now()
    with transaction.atomic():
        return bool(
            WaitingRoom.objects.filter(pk=room_id, paused=True).update(
                paused=False, admission_clock=now
            )
        )
