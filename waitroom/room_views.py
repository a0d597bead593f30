"""Queue pages: the queue itself (live over a websocket, polling as fallback), joining, and
entering once admitted (the token goes into a cookie).  Thin.  (The queue page's one-click
waitlist join is a waitlist door: storefront/waitlist_views.py.)"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from accounts.selectors import has_verified_email
from bookings import catalogue
from bookings.models import SaleKind
from kernel.errors import DomainError
from kernel.web.client_ip import client_ip
from kernel.web.problems import domain_error_response
from waitroom import joining, proof_of_work, room_selectors
from waitroom.errors import QueueUnavailable
from waitroom.gate import cookie_name
from waitroom.models import WaitingRoom


def _room(room_id: int) -> WaitingRoom:
    return get_object_or_404(
        WaitingRoom.objects.select_related("sale", *catalogue.owner_paths("sale__")), pk=room_id
    )


def _item(room: WaitingRoom):
    """The catalogue item (a flight, an event) whose sale the room guards."""
    _owner, item = catalogue.owner_item(room.sale)
    return item


def _shop_url(room: WaitingRoom) -> str:
    """Where an admitted shopper goes: the seat picker of what the waiting room guards."""
    if room.kind == SaleKind.EVENT:
        return reverse("events:detail", args=[_item(room).pk])
    picker = reverse("flights:seat_picker", args=[_item(room).pk])
    return picker + "?" + urlencode({"fare": "ECONOMY", "passengers": 1})


@require_GET
@never_cache
@login_required
def queue_page(request: HttpRequest, room_id: int) -> HttpResponse:
    room = _room(room_id)
    try:
        status = room_selectors.queue_status(room=room, customer_id=request.user.pk)
    except QueueUnavailable as error:
        messages.warning(request, f"{error.title}. {error.detail}")
        status = {"status": "UNKNOWN"}
    return render(
        request,
        "waitroom/queue.html",
        {
            "room": room,
            # A flight's page names the flight and its airports; others the sale's summary.
            "flight": _item(room) if room.kind == SaleKind.FLIGHT else None,
            "status": status,
            "needs_verified_email": room.require_verified_email
            and not has_verified_email(request.user),
            "algorithm": room_selectors.SHUFFLE_ALGORITHM,
            "has_presale_codes": room.presale_codes.exists(),
            "waitlist_classes": room_selectors.waitlist_classes(room=room),
            "your_shuffle_key": room_selectors.shuffle_key(
                seed=room.seed, room_id=room.pk, customer_id=request.user.pk
            )
            if room.shuffled_at
            else None,
        },
    )


@require_POST
def join(request: HttpRequest, room_id: int) -> HttpResponse:
    page = reverse("waitroom:queue", args=[room_id])
    if not request.user.is_authenticated:
        return redirect_to_login(page)
    try:
        joining.join_queue(
            room_id=room_id,
            customer=request.user,
            address=client_ip(request) or None,
            presale_code=request.POST.get("presale_code", "")[:64].strip() or None,
            proof=_proof(request),
        )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
    return redirect(page)


def _proof(request: HttpRequest) -> tuple[str, str] | None:
    challenge = request.POST.get("proof_challenge", "")[:200]
    return (challenge, request.POST.get("proof_solution", "")[:12]) if challenge else None


@require_POST
@never_cache
def challenge(request: HttpRequest, room_id: int) -> JsonResponse:
    """The join form's script asks for its proof-of-work challenge here (CSRF-checked)."""
    if not request.user.is_authenticated:
        return JsonResponse({"detail": _("Please log in first.")}, status=401)
    waiting_room = _room(room_id)
    try:
        issued = proof_of_work.issue_challenge(
            room=waiting_room, customer=request.user, address=client_ip(request) or None
        )
    except DomainError as error:
        return domain_error_response(error)
    return JsonResponse(issued.wire())


@require_GET
@never_cache
@login_required
def status_json(request: HttpRequest, room_id: int) -> JsonResponse:
    """The polling fallback of the queue page (same body as the websocket's messages)."""
    waiting_room = _room(room_id)
    try:
        return JsonResponse(
            room_selectors.queue_status(room=waiting_room, customer_id=request.user.pk)
        )
    except DomainError as error:
        return domain_error_response(error)


@require_GET
@never_cache
@login_required
def enter(request: HttpRequest, room_id: int) -> HttpResponse:
    """Admitted: put the token in this room's cookie and go on to the seat picker."""
    waiting_room = _room(room_id)
    status = room_selectors.queue_status(room=waiting_room, customer_id=request.user.pk)
    if status["status"] != "ADMITTED":
        messages.error(request, _("It is not your turn yet: please keep your place in the queue."))
        return redirect("waitroom:queue", room_id=room_id)
    response = redirect(_shop_url(waiting_room))
    response.set_cookie(
        cookie_name(waiting_room.pk),
        status["token"],
        max_age=waiting_room.stay_seconds,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    messages.success(request, _("You are in! Choose your seats before your time runs out."))
    return response
