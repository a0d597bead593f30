"""Waitlist pages: join from a sold-out fare class, leave from "My bookings", and the queue
page's one-click join for those told a seat is unlikely (the rule is the waiting room's,
`waitroom.room_waitlist`).  Thin: validate,
call a service, say what happened.  Offers appear live in "My bookings" (the page polls
`state.json` and reloads when the waitlist changes) and by e-mail; they are ordinary holds,
paid from the hold page."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from bookings import waitlist, waitlist_selectors
from kernel.errors import DomainError
from kernel.web.forms import form_errors
from storefront.waitlist_api import sale_of_flight
from storefront.waitlist_forms import JoinForm, LeaveForm, QueueWaitlistForm
from waitroom import room_selectors, room_waitlist
from waitroom.models import WaitingRoom


def _back(request: HttpRequest) -> str:
    """The page the form was on (search results, seat picker), if it is one of ours."""
    target = request.POST.get("next", "")
    # A path of ours only: "0" would be taken for a URL name by redirect(), and a control
    # character cannot go into a Location header.
    if (
        target.startswith("/")
        and target.isprintable()
        and len(target) <= 2000
        and url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure())
    ):
        return target
    return reverse("flights:search")


@require_POST
def join(request: HttpRequest, flight_id: int) -> HttpResponse:
    back = _back(request)
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    form = JoinForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Could not join the waitlist.") + " " + form_errors(form))
        return redirect(back)
    try:
        entry = waitlist.join_waitlist(
            customer=request.user,
            sale_id=sale_of_flight(flight_id),
            fare_class=form.cleaned_data["fare_class"],
            party_size=form.cleaned_data["party_size"],
        )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
        return redirect(back)
    messages.success(
        request,
        _(
            "You are number %(position)d on the waitlist. When seats free up we hold them for "
            "you and tell you by e-mail."
        )
        % {"position": waitlist_selectors.waitlist_position(entry=entry)},
    )
    return redirect(reverse("bookings:mine") + "#waitlist")


@require_POST
def leave(request: HttpRequest, flight_id: int) -> HttpResponse:
    mine = reverse("bookings:mine")
    if not request.user.is_authenticated:
        return redirect_to_login(mine)
    form = LeaveForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Could not leave the waitlist.") + " " + form_errors(form))
        return redirect(mine)
    try:
        waitlist.leave_waitlist(
            customer=request.user,
            sale_id=sale_of_flight(flight_id),
            fare_class=form.cleaned_data["fare_class"],
        )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
    else:
        messages.success(request, _("You have left the waitlist."))
    return redirect(mine + "#waitlist")


@require_GET
@never_cache
@login_required
def state(request: HttpRequest) -> JsonResponse:
    entries = waitlist_selectors.waitlist_of(customer=request.user)
    return JsonResponse({"state": waitlist_selectors.waitlist_fingerprint(entries)})


@require_POST
def join_from_queue(request: HttpRequest, room_id: int) -> HttpResponse:
    page = reverse("waitroom:queue", args=[room_id])
    if not request.user.is_authenticated:
        return redirect_to_login(page)
    room = get_object_or_404(WaitingRoom.objects.select_related("sale"), pk=room_id)
    form = QueueWaitlistForm(request.POST, classes=room_selectors.waitlist_classes(room=room))
    if not form.is_valid():
        messages.error(request, _("Could not join the waitlist: choose a fare and a party size."))
        return redirect(page)
    try:
        room_waitlist.join_waitlist_from_queue(
            room_id=room_id,
            customer=request.user,
            fare_class=form.cleaned_data["fare_class"],
            party_size=form.cleaned_data["party_size"],
        )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
        return redirect(page)
    messages.success(request, _("You are on the waitlist, and you keep your place in the queue."))
    return redirect(reverse("bookings:mine") + "#waitlist")
