"""Safety-net mode (issue 30, item 3; docs/architecture.md, "Safety net"): a room that stays
dormant, letting shoppers hold without a token, until the rush passes a threshold staff
set, hold attempts in one second or shoppers holding at once; then it switches itself on
and everyone new queues.  Whoever is holding (or paying for a hold) at that moment is given
admission, so they keep going; tokens already issued stay valid.  Once nobody waits and the
calm period is over, the admission tick puts the room back to sleep.

The switch is one conditional update (`safety_net_on_since IS NULL`): of any number of
requests crossing the threshold at once, exactly one switches it on and grants the
admissions, in the same transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction

from bookings.models import Booking, BookingStatus
from waitroom import queue
from waitroom.models import Admission, QueueEntry, QueueStatus, WaitingRoom

COUNTER_SECONDS = 5


def lets_through(*, room_id: int, customer_id: int, now: datetime) -> bool:
    """Whether a hold without a valid token may go on: the room is a dormant safety net
    below its thresholds, or it is on and this customer was given admission when it
    switched on.  Counts the attempt; may switch the room on (then False)."""
    room = WaitingRoom.objects.filter(pk=room_id, safety_net=True).first()
    if room is None:
        return False
    if room.safety_net_on_since is not None:
        return _admitted(room=room, customer_id=customer_id, now=now)
    attempts = queue.count_hold_attempt(room.pk, second=int(now.timestamp()), keep=COUNTER_SECONDS)
    if not _over_threshold(room=room, attempts=attempts):
        return True
    switch_on(room_id=room.pk, now=now)
    return _admitted(room=room, customer_id=customer_id, now=now)


def _over_threshold(*, room: WaitingRoom, attempts: int) -> bool:
    if room.safety_net_holds_per_second and attempts > room.safety_net_holds_per_second:
        return True
    if room.safety_net_shoppers:
        holding = (
            Booking.objects.filter(sale_id=room.sale_id, status=BookingStatus.HELD)
            .values("customer_id")
            .distinct()
            .count()
        )
        return holding >= room.safety_net_shoppers
    return False


def _admitted(*, room: WaitingRoom, customer_id: int, now: datetime) -> bool:
    return QueueEntry.objects.filter(
        room=room,
        customer_id=customer_id,
        status=QueueStatus.ADMITTED,
        admission_expires_at__gt=now,
    ).exists()


def switch_on(*, room_id: int, now: datetime) -> bool:
    """Dormant -> on, once; everyone holding on the sale now is admitted for the stay (a
    new entry, or theirs turned ADMITTED), so their hold, payment and next hold go on.
    Returns whether this call switched it on."""
    with transaction.atomic():
        won = WaitingRoom.objects.filter(
            pk=room_id, safety_net=True, safety_net_on_since__isnull=True
        ).update(safety_net_on_since=now)
        if won:
            _admit_those_holding(WaitingRoom.objects.get(pk=room_id), now)
    return bool(won)


def _admit_those_holding(room: WaitingRoom, now: datetime) -> None:
    expires_at = now + timedelta(seconds=room.stay_seconds)
    holding = set(
        Booking.objects.filter(sale_id=room.sale_id, status=BookingStatus.HELD).values_list(
            "customer_id", flat=True
        )
    )
    for customer_id in sorted(holding):
        entry, _created = QueueEntry.objects.update_or_create(
            room=room,
            customer_id=customer_id,
            defaults={
                "status": QueueStatus.ADMITTED,
                "order_key": None,
                "admitted_at": now,
                "admission_expires_at": expires_at,
            },
            create_defaults={
                "sale_id": room.sale_id,
                "status": QueueStatus.ADMITTED,
                "joined_at": now,
                "admitted_at": now,
                "admission_expires_at": expires_at,
            },
        )
        Admission.objects.create(
            room=room,
            sale_id=room.sale_id,
            entry=entry,
            customer_id=customer_id,
            order_key=0,
            admitted_at=now,
            expires_at=expires_at,
        )


def go_dormant_if_calm(*, room: WaitingRoom, now: datetime) -> bool:
    """Under the admission step's room lock: on, calm long enough and nobody waiting ->
    dormant.  The caller saves `safety_net_on_since`."""
    if not room.safety_net or room.safety_net_on_since is None:
        return False
    if now - room.safety_net_on_since < timedelta(seconds=room.safety_net_calm_seconds):
        return False
    if QueueEntry.objects.filter(room=room, status=QueueStatus.WAITING).exists():
        return False
    room.safety_net_on_since = None
    return True
