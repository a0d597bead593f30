"""The staff's live panel of one waiting room (issue 30, item 6): the figures, read from
PostgreSQL (the record) and Redis (who waits), for the admin page, its JSON poll and
/metrics alike, so all three say the same.

"Per minute" figures count the last 60 seconds.  The ETA given is what the queue page told
people when they joined (`QueueEntry.eta_promised_at`); the ETA that came true is when they
were let in: both are averaged, as waits, over those admitted in the last ETA_MINUTES.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Avg, Count, F
from django.utils import timezone

from bookings import catalogue
from bookings.models import Booking
from waitroom import queue, room_selectors
from waitroom.models import AdmissionMode, QueueEntry, QueueStatus, RoomChange, WaitingRoom

ETA_MINUTES = 15


def panel_figures(*, room: WaitingRoom, now: datetime | None = None) -> dict:
    now = now or timezone.now()
    minute_ago = now - timedelta(minutes=1)
    try:
        waiting, prequeue = queue.counts(room.pk)
    except Exception:  # the panel must still answer while Redis is down
        waiting = prequeue = None
    inventory = room_selectors.inventory_of(room=room)
    bookings = Booking.objects.filter(sale_id=room.sale_id)
    given, came_true = _etas(room=room, since=now - timedelta(minutes=ETA_MINUTES))
    return {
        "room": room.pk,
        "paused": room.paused,
        "mode": room.admission_mode,
        "ratePerMinute": room.admit_per_minute,
        "floorPerMinute": room.adaptive_floor_per_minute,
        "ceilingPerMinute": room.adaptive_ceiling_per_minute,
        "waiting": waiting,
        "prequeue": prequeue,
        "admittedPerMinute": room.admissions.filter(admitted_at__gt=minute_ago).count(),
        "insideNow": QueueEntry.objects.filter(
            room=room, status=QueueStatus.ADMITTED, admission_expires_at__gt=now
        ).count(),
        "holdsPerMinute": bookings.filter(created_at__gt=minute_ago).count(),
        "salesPerMinute": bookings.filter(confirmed_at__gt=minute_ago).count(),
        "unitsLeft": inventory.left,
        "unitsHeld": inventory.held,
        "etaGivenSeconds": given,
        "etaCameTrueSeconds": came_true,
        "proofOfWork": _difficulty(room),
        "at": room_selectors.utc_text(now),
    }


def _etas(*, room: WaitingRoom, since: datetime) -> tuple[int | None, int | None]:
    waits = QueueEntry.objects.filter(
        room=room, admitted_at__gt=since, eta_promised_at__isnull=False
    ).aggregate(
        given=Avg(F("eta_promised_at") - F("joined_at")),
        true=Avg(F("admitted_at") - F("joined_at")),
    )
    return tuple(  # type: ignore[return-value]
        None if w is None else math.ceil(w.total_seconds()) for w in (waits["given"], waits["true"])
    )


def _difficulty(room: WaitingRoom) -> dict | None:
    """The bits a fresh address pays now, and the bits of the prefix holding most places
    (proof_of_work.difficulty_for's place term, without the account's)."""
    if not room.require_proof_of_work:
        return None
    limits = settings.WAITING_ROOM
    busiest = (
        QueueEntry.objects.filter(room=room)
        .exclude(joined_prefix="")
        .values("joined_prefix")
        .annotate(n=Count("id"))
        .order_by("-n")
        .first()
    )
    places = busiest["n"] if busiest else 0
    bits = limits["POW_BASE_BITS"] + math.ceil(math.log2(1 + places))
    return {
        "baseBits": limits["POW_BASE_BITS"],
        "busiestPrefixBits": min(bits, limits["POW_MAX_BITS"]),
        "busiestPrefixPlaces": places,
    }


def recent_changes(*, room: WaitingRoom, limit: int = 20) -> list[RoomChange]:
    return list(room.changes.select_related("changed_by")[:limit])


def adaptive(room: WaitingRoom) -> bool:
    return room.admission_mode == AdmissionMode.ADAPTIVE


# --- the same figures for /metrics (kernel.metrics.register_waiting_room) --------------------

METRIC_FIGURES = (
    "waiting",
    "prequeue",
    "admittedPerMinute",
    "insideNow",
    "holdsPerMinute",
    "salesPerMinute",
    "unitsLeft",
    "ratePerMinute",
    "etaGivenSeconds",
    "etaCameTrueSeconds",
)


def _open_rooms(now: datetime):
    return WaitingRoom.objects.filter(
        catalogue.open_sales_q(now=now, prefix="sale__"), opens_at__lte=now
    ).select_related("sale")


def open_room_panels() -> dict[str, dict[str, float]]:
    """{room id: {figure: number}} for every open room; figures not known now are left out."""
    now = timezone.now()
    panels = {}
    for room in _open_rooms(now):
        figures = panel_figures(room=room, now=now)
        numbers = {k: figures[k] for k in METRIC_FIGURES if figures[k] is not None}
        numbers["paused"] = int(figures["paused"])
        if figures["proofOfWork"]:
            numbers["powBusiestPrefixBits"] = figures["proofOfWork"]["busiestPrefixBits"]
        panels[str(room.pk)] = numbers
    return panels


def open_room_lengths() -> dict[str, float]:
    """{room id: people in it}: the queue and the pre-queue."""
    return {
        room: figures["waiting"] + figures.get("prequeue", 0)
        for room, figures in open_room_panels().items()
        if "waiting" in figures
    }
