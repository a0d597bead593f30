"""The admin's live panel of one waiting room (issue 30, item 6): thin views over
`waitroom.panel` (the figures) and `waitroom.staff.do_change_admission` (audited changes).

The page polls `…/panel/figures/` (JSON, the same permission) every few seconds, so the
figures move without a reload.  A change is asked for, then confirmed on a second step
(the confirmation page), as the departure panel does; pausing and resuming need
`pause_waitingroom`, rates `change_waitingroom`.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue
from kernel.errors import InvalidRequest
from kernel.local_time_admin import zone_label
from waitroom import panel, staff
from waitroom.models import RoomChangeKind, WaitingRoom

RATE_INPUTS = {
    "rate": "admit_per_minute",
    "floor": "adaptive_floor_per_minute",
    "ceiling": "adaptive_ceiling_per_minute",
}


def _viewable(request: HttpRequest, room_id: int) -> WaitingRoom:
    if not request.user.has_perm("waitroom.view_waitingroom"):
        raise PermissionDenied
    return get_object_or_404(
        WaitingRoom.objects.select_related(
            "sale", *catalogue.owner_paths("sale__"), *catalogue.detail_paths("sale__")
        ),
        pk=room_id,
    )


def _figures(room: WaitingRoom) -> dict:
    """The panel's figures, and their moment as the clock at the flight's airport or the
    event's venue, zone named, as every time in the admin (issue 31 item 12): `atLocal`."""
    now = timezone.now()
    zone = _zone(room)
    local = now.astimezone(ZoneInfo(zone))
    at_local = f"{local:%Y-%m-%d %H:%M:%S} {zone_label(zone, at=now)}"
    return {**panel.panel_figures(room=room, now=now), "atLocal": at_local}


def _zone(room: WaitingRoom) -> str:
    return catalogue.describe(room.sale).time_zone


def figures_view(request: HttpRequest, room_id: int) -> JsonResponse:
    room = _viewable(request, room_id)
    return JsonResponse(_figures(room))


def panel_view(model_admin: admin.ModelAdmin, request: HttpRequest, room_id: int) -> HttpResponse:
    room = _viewable(request, room_id)
    if request.method != "POST":
        return _render(model_admin, request, room, mode="panel")
    kind = request.POST.get("action", "")
    if kind not in RoomChangeKind.values:
        messages.error(request, gettext("Choose pause, resume or a rate change."))
        return redirect(request.path)
    allowed = "waitroom.change_waitingroom" if kind == "RATE" else "waitroom.pause_waitingroom"
    if not request.user.has_perm(allowed):
        raise PermissionDenied
    try:
        rates = _rates(request, room) if kind == "RATE" else None
    except InvalidRequest as exc:
        messages.error(request, str(exc))
        return redirect(request.path)
    if request.POST.get("confirm") != "yes":
        return _render(model_admin, request, room, mode="confirm", kind=kind, rates=rates)
    try:
        change = staff.do_change_admission(
            room_id=room.pk, by=request.user, kind=RoomChangeKind(kind), rates=rates
        )
    except InvalidRequest as exc:
        messages.error(request, str(exc))
        return redirect(request.path)
    if change is None:
        messages.info(request, gettext("Nothing changed."))
    else:
        messages.success(request, change.get_kind_display())
    return redirect(request.path)


def _rates(request: HttpRequest, room: WaitingRoom) -> dict[str, int | None]:
    rates: dict[str, int | None] = {}
    for name, field in RATE_INPUTS.items():
        raw = request.POST.get(name, "").strip()
        if not raw:
            continue
        if not raw.isdigit() or not 1 <= int(raw) <= 100_000:
            raise InvalidRequest(
                gettext("A rate is a whole number of people per minute, 1 to 100000.")
            )
        rates[field] = int(raw)
    if not rates:
        raise InvalidRequest(gettext("Give a rate, a floor or a ceiling."))
    return rates


def _render(model_admin, request, room: WaitingRoom, *, mode: str, **extra) -> TemplateResponse:
    return TemplateResponse(
        request,
        "admin/waitroom/waitingroom/live_panel.html",
        {
            **model_admin.admin_site.each_context(request),
            "title": gettext("Live panel: %(room)s") % {"room": room},
            "opts": WaitingRoom._meta,
            "room": room,
            "figures": _figures(room),
            "zone": _zone(room),
            "changes": panel.recent_changes(room=room),
            "adaptive": panel.adaptive(room),
            "can_pause": request.user.has_perm("waitroom.pause_waitingroom"),
            "can_change": request.user.has_perm("waitroom.change_waitingroom"),
            "mode": mode,
            **extra,
        },
    )
