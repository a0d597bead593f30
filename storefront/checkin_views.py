"""The gate's check-in page for staff: choose the flight boarding or the event letting people
in, then scan ticket codes.  The choices and their check come from the catalogue."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import timedelta

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from bookings import catalogue
from bookings.models import SaleKind
from bookings.ticket_codes import is_plausible_code
from bookings.tickets import scan_ticket
from storefront.views import local_time


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous users go to the login page; signed-in non-staff get 403, not a login loop."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied(_("Gate check-in is for staff."))
        return view(request, *args, **kwargs)

    return wrapper


def _gate_kind(request: HttpRequest) -> SaleKind:
    """Which gate the page is: a flight's (the default) or an event's (`?kind=event`)."""
    asked = (request.POST.get("kind") or request.GET.get("kind") or "").upper()
    if asked == SaleKind.EVENT:
        try:
            catalogue.for_kind(SaleKind.EVENT)
        except LookupError:  # no events catalogue in this installation
            return SaleKind.FLIGHT
        return SaleKind.EVENT
    return SaleKind.FLIGHT


@require_http_methods(["GET", "POST"])
@staff_required
def checkin_scan(request: HttpRequest) -> HttpResponse:
    """The gate: pick the flight boarding or the event letting people in, then scan codes.
    The list and the check of the choice come from the catalogue (`gate_entries`)."""
    kind = _gate_kind(request)
    sold_by = catalogue.for_kind(kind)
    field = sold_by.owner or "sale"  # the form's field: "flight" or "event", its id
    choose = (
        _("Choose the event you are letting people in to.")
        if kind == SaleKind.EVENT
        else _("Choose the flight you are boarding.")
    )
    # A search string, never stored: a NUL (which PostgreSQL refuses in text) is just dropped.
    query = (request.POST.get("q") or request.GET.get("q") or "").replace("\x00", "").strip()[:40]
    now = timezone.now()
    today_until = now + timedelta(hours=24)
    entries = [
        {
            "entry": e,
            "local": local_time(e.starts_at, e.time_zone),
            "today": e.starts_at <= today_until,
        }
        for e in sold_by.gate_entries(query=query, now=now, limit=60)
    ]
    context: dict = {
        "kind": kind.lower(),
        "field": field,
        "entries": entries,
        "q": query,
        "chosen": None,
        "result": None,
        "error": None,
    }
    raw_choice = request.POST.get(field) or request.GET.get(field)
    if raw_choice:
        try:
            context["chosen"] = int(raw_choice)
        except ValueError:
            context["error"] = choose
        else:
            if not 0 < context["chosen"] < 2**63:  # no id of ours; the database would refuse it
                context["chosen"], context["error"] = None, choose
    if request.method == "POST" and not context["error"]:
        code = request.POST.get("code", "").strip()
        entry = sold_by.gate_entry(context["chosen"], now=now) if context["chosen"] else None
        if entry is None:
            context["error"] = choose
        elif not code:
            context["error"] = _("Scan or type a ticket code.")
        elif not is_plausible_code(code):
            context["error"] = _("That is not a Seatkeeper ticket code.")
        else:
            context["result"] = scan_ticket(
                code=code,
                sale_id=entry.sale_id,
                scanned_by=request.user,
                # The agent ticked it after asking the passenger (an exit row's conditions).
                conditions_confirmed=request.POST.get("conditions_confirmed") == "on",
            )
            context["code"] = code
            if context["result"].ticket is not None:
                context["face"] = catalogue.ticket_face(context["result"].ticket)
    status = 400 if context["error"] else 200
    return render(request, "bookings/checkin.html", context, status=status)
