"""Priority lanes: who is next when presale-code holders queue in their own lane.

The lane is in the order key (order_keys.in_lane: the priority lane's keys are negative), so
the Redis index and every page's place see the lanes as one line, priority first.  With a
share below 100 % admission mixes the lanes: each step owes the priority lane `share` of
what it admits, carried over between steps as a fraction (`WaitingRoom.priority_credit`),
and a lane that runs short leaves its places to the other (nobody waits for an empty lane).
"""

from __future__ import annotations

from waitroom.models import QueueEntry, QueueStatus, WaitingRoom


def split_take(
    *, take: int, share: int, credit: float, priority_waiting: int, general_waiting: int
) -> tuple[int, int, float]:
    """(from the priority lane, from the general lane, the credit carried over).  The credit
    stays within [0, 1]: an empty lane builds up no burst for later."""
    credit += take * share / 100
    priority = min(int(credit + 1e-9), priority_waiting, take)
    general = min(take - priority, general_waiting)
    priority = min(take - general, priority_waiting)
    return priority, general, max(0.0, min(credit - priority, 1.0))


def next_in_line(room: WaitingRoom, take: int) -> list[QueueEntry]:
    """Up to `take` waiting entries to admit now, locked, read from PostgreSQL (the record).
    Sets `room.priority_credit`; the caller saves it with the room."""
    waiting = QueueEntry.objects.select_for_update().filter(
        room=room, status=QueueStatus.WAITING, order_key__isnull=False
    )
    if room.priority_share >= 100:
        return list(waiting.order_by("order_key")[:take])  # the lane first: one query
    priority = list(waiting.filter(order_key__lt=0).order_by("order_key")[:take])
    general = list(waiting.filter(order_key__gt=0).order_by("order_key")[:take])
    from_priority, from_general, room.priority_credit = split_take(
        take=take,
        share=room.priority_share,
        credit=room.priority_credit,
        priority_waiting=len(priority),
        general_waiting=len(general),
    )
    return priority[:from_priority] + general[:from_general]
