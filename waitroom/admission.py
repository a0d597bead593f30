"""Admission: the beat's tick lets people in from the front of each open room's queue, by
rate, by the places free inside and by the inventory left.  The rules, and why, are in
docs/architecture.md ("Waiting room").

PostgreSQL holds the record (who was admitted until when); Redis holds the index over it
and is written only after the PostgreSQL transaction commits.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.tokens import refresh_token_entries
from bookings import catalogue
from bookings.models import Sale
from waitroom import lanes, live, origin_health, queue, room_selectors, safety_net, sell_out
from waitroom.errors import QueueUnavailable
from waitroom.models import Admission, QueueEntry, QueueStatus, WaitingRoom
from waitroom.shuffle import key_late_arrivals, shuffle_prequeue

logger = logging.getLogger(__name__)


@dataclass
class TickResult:
    room_id: int
    skipped: str | None = None
    shuffled: int | None = None
    admitted: list[int] = field(default_factory=list)
    horizon: int = 0
    shopping: int = 0
    units_left: int = 0


@dataclass
class _Step:
    """What one admission step decided, for its answer and for the after-commit messages."""

    result: TickResult
    late: list[tuple[int, int]]
    admitted: list[QueueEntry]
    state: dict
    sold_out_now: bool = False


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
        skipped = _why_not_now(room, now)
        if skipped:
            return TickResult(room_id, skipped=skipped)
        step = _admission_step(room, now)
        transaction.on_commit(
            lambda: _publish_tick(room_id=room.pk, step=step, broadcast=broadcast), robust=True
        )
    return step.result


def _why_not_now(room: WaitingRoom | None, now: datetime) -> str | None:
    """Why this room admits nobody now (None: it may)."""
    if room is None:
        return "busy or gone"
    if now < room.opens_at:
        return "not open yet"
    if not _engine_sale_open(room, now):
        # Closed, over or called off: nobody is let in to a sale that sells nothing.
        return "sale closed"
    return None


def _admission_step(room: WaitingRoom, now: datetime) -> _Step:
    """The step's writes, under the room's row lock: the shuffle (once), the late arrivals'
    keys, the admitted and the rate clock."""
    result = TickResult(room.pk)
    if room.shuffled_at is None:
        result.shuffled = shuffle_prequeue(room, now)
    late = key_late_arrivals(room)
    inventory = room_selectors.inventory_of(room=room)
    shopping = room_selectors.shopping_count(room=room, now=now)
    horizon = room_selectors.horizon_people(units_left=inventory.left, shopping=shopping)
    # Adaptive mode: the rate follows the origin's health before this step spends it.
    origin_health.follow_origin(room=room, now=now)
    budget, start, interval = _rate_budget(room, now)
    admitted: list[QueueEntry] = []
    room_inside = max(room.max_inside - shopping, 0)
    take = 0 if room.paused else min(budget, room_inside, horizon)
    if take > 0:
        # Who is next is read from PostgreSQL, the record, not from the Redis index:
        # admission goes on while Redis is down, and never trusts a stale index.
        admitted = lanes.next_in_line(room, take)
        _admit(room, admitted, now)
        room.admission_clock = start + timedelta(seconds=interval * len(admitted))
    safety_net.go_dormant_if_calm(room=room, now=now)
    sold_out_now = sell_out.follow_stock(
        room=room, state=room_selectors.stock_state(inventory), now=now
    )
    room.save(
        update_fields=[
            "shuffled_at",
            "shuffled_count",
            "admission_clock",
            "sold_out_at",
            "priority_credit",
            "safety_net_on_since",
            "admit_per_minute",
            "adaptive_adjusted_at",
        ]
    )
    result.admitted = [e.pk for e in admitted]
    result.horizon = max(horizon - len(admitted), 0)
    result.shopping = shopping + len(admitted)
    result.units_left = inventory.left
    state = {
        "horizon": result.horizon,
        "paused": room.paused,
        "interval": interval,
        "rate": room.admit_per_minute,
        "shuffled": True,
        # unitsLeft, unitsHeld, stock, soldOut: from PostgreSQL, like the horizon.
        **room_selectors.stock_facts(inventory, at=now),
    }
    return _Step(
        result=result, late=late, admitted=admitted, state=state, sold_out_now=sold_out_now
    )


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
                sale_id=room.sale_id,
                entry=e,
                customer_id=e.customer_id,
                order_key=e.order_key,
                admitted_at=now,
                expires_at=expires_at,
            )
            for e in entries
        ]
    )
    # They hold at once: their API tokens' users cached again, which the wait outlasted.
    refresh_token_entries(user_ids=[e.customer_id for e in entries])


def _publish_tick(*, room_id: int, step: _Step, broadcast: bool = True) -> None:
    """After commit: tell the admitted, mirror the step into Redis, and (with `broadcast`,
    or after a shuffle) tell every queue page."""
    live.publish_admitted(room_id=room_id, customer_ids=[e.customer_id for e in step.admitted])
    told = False
    try:
        queue.heal(room_id)
        told = _mirror_tick(room_id=room_id, step=step, broadcast=broadcast)
    except QueueUnavailable:
        # The index missed this step's removals (Redis down, or a cluster primary failing
        # over, whose promoted replica keeps the index *with* its `built` marker): rebuilt
        # from PostgreSQL by the next step that reaches Redis.
        queue.note_lost_write(room_id)
        raise
    finally:
        if step.sold_out_now and not told:
            # No move went out (a step that does not broadcast, or Redis failed first).
            live.publish_sold_out(
                room_id=room_id, stock=room_selectors.stock_facts_of_state(step.state)
            )


def _mirror_tick(*, room_id: int, step: _Step, broadcast: bool) -> bool:
    """Returns whether the move went out to every page (carrying the sell-out, if this
    step sold out: one message per page, not two)."""
    reshuffled = step.result.shuffled is not None
    if reshuffled:
        queue.invalidate(room_id)
        queue.ensure_index(room_id)
    queue.add(room_id, step.late)
    pairs = [(e.pk, e.order_key) for e in step.admitted]
    if not (broadcast or reshuffled):
        queue.defer_removal(room_id, pairs)
        return False
    # The state goes with the removals: a snapshot never pairs a place that still counts
    # the deferred with a horizon that already took them off.
    queue.save_state(room_id, step.state)
    # Someone entered the priority lane ahead of general places since the last broadcast:
    # every page re-reads its place (one shared read per web process).
    resync = queue.take_lane_change(room_id) or reshuffled
    version, removed = queue.remove_and_bump(room_id, pairs)
    live.publish_queue_moved(
        room_id=room_id,
        version=version,
        message={
            "resync": resync,
            "removed": [order_key for _entry_id, order_key in removed],
            "admitted": [entry_id for entry_id, _order_key in removed],
            "state": step.state,
            **(
                {"soldOut": room_selectors.stock_facts_of_state(step.state)}
                if step.sold_out_now
                else {}
            ),
        },
    )
    return True


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
