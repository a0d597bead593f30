"""Staff's writes on a waiting room: open one in front of a sale, pause and resume admission,
set its rates from the live panel (audited).  The admin calls these; so do the demo data and
the tests."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from kernel.errors import InvalidRequest
from waitroom.models import AdmissionMode, RoomChange, RoomChangeKind, WaitingRoom


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


# --- the live panel's changes, audited ---------------------------------------------------------

RATE_FIELDS = ("admit_per_minute", "adaptive_floor_per_minute", "adaptive_ceiling_per_minute")


def _settings_of(room: WaitingRoom) -> dict:
    return {"paused": room.paused, **{name: getattr(room, name) for name in RATE_FIELDS}}


def do_change_admission(
    *,
    room_id: int,
    by: AbstractBaseUser,
    kind: RoomChangeKind,
    rates: dict[str, int | None] | None = None,
    now: datetime | None = None,
) -> RoomChange | None:
    """Pause, resume or set the rates of one room, with its audit row (who, when, the
    settings before and after), in one transaction under the room's row lock.  Returns None
    when nothing changed (already paused, the same rates): no audit row then.  Rates are
    checked by the room's constraints (a floor above the ceiling is InvalidRequest)."""
    now = now or timezone.now()
    with transaction.atomic():
        room = WaitingRoom.objects.select_for_update().get(pk=room_id)
        before = _settings_of(room)
        if kind == RoomChangeKind.PAUSE:
            room.paused = True
        elif kind == RoomChangeKind.RESUME:
            if room.paused:
                room.admission_clock = now  # as resume_admission: no burst after a pause
            room.paused = False
        else:
            for name, value in (rates or {}).items():
                if name in RATE_FIELDS:
                    setattr(room, name, value)
            _check_rates(room)
            if room.admission_mode == AdmissionMode.ADAPTIVE:
                # The live rate stays inside the new bounds; the tick moves it from there.
                room.admit_per_minute = min(
                    max(room.admit_per_minute, room.adaptive_floor_per_minute),
                    room.adaptive_ceiling_per_minute,
                )
        after = _settings_of(room)
        if after == before:
            return None
        room.save(update_fields=["paused", "admission_clock", *RATE_FIELDS])
        return RoomChange.objects.create(
            room=room,
            sale_id=room.sale_id,
            changed_by=by,
            changed_at=now,
            kind=kind,
            before=before,
            after=after,
        )


def _check_rates(room: WaitingRoom) -> None:
    try:
        room.full_clean(validate_unique=False)
    except ValidationError as exc:
        raise InvalidRequest(" ".join(exc.messages)) from exc
