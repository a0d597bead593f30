"""Staff's writes on a waiting room: open one in front of a sale, pause and resume admission.
The admin calls these; so do the demo data and the tests."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from waitroom.models import WaitingRoom


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
