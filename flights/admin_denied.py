"""The flight admin's departure panel (`/admin/flights/flight/<id>/departure/`): the day's
counts, and its actions, each behind its permission and a confirmation page that shows what
will happen before anything changes (`confirm=yes` only from that page):

- ask for volunteers (`flights.deny_boarding`): the offer amount, e-mailed and on their pages;
- deny boarding (`flights.deny_boarding`): DENIAL_PRIORITY stated, the passengers it takes
  now, each one's choice (next flight or refund) and the care offered;
- pay compensation (`flights.pay_compensation`): one ledger entry, with its payout reference;
- set a checked-in passenger's Art. 11 flags (`flights.deny_boarding`, no confirmation: it
  only protects a passenger): `flights.boarding_priority.set_boarding_priority`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from flights import compensation
from flights.boarding_priority import set_boarding_priority
from flights.denied_boarding import DENIAL_PRIORITY, ask_for_volunteers, deny_boarding
from flights.departure_panel import departure_panel
from flights.eu261 import Remedy, assess_flight
from flights.models import Compensation
from kernel.errors import DomainError

DENY = "flights.deny_boarding"
PAY = "flights.pay_compensation"
# Stored as these English values (the audit's language); shown in the staff member's.
CARE = {
    "meals and refreshments": _("meals and refreshments"),
    "hotel accommodation": _("hotel accommodation"),
    "transport to the hotel": _("transport to the hotel"),
    "two calls": _("two calls"),
}


def departure_panel_view(model_admin: admin.ModelAdmin, request: HttpRequest, flight_id: int):
    if not request.user.has_perm("flights.view_flight"):
        raise PermissionDenied
    if request.method == "POST" and request.POST.get("action") == "priority":
        return _set_priority(request, flight_id)
    if request.method == "POST":
        return _act(model_admin, request, flight_id)
    panel = departure_panel(flight_id=flight_id)
    assessment = assess_flight(panel.flight)
    return _render(
        model_admin,
        request,
        panel,
        mode="panel",
        suggested_amount=assessment.amount(remedy=Remedy.REFUND),
    )


def _render(model_admin, request, panel, *, mode: str, **extra) -> TemplateResponse:
    return TemplateResponse(
        request,
        "admin/flights/flight/departure_panel.html",
        {
            **model_admin.admin_site.each_context(request),
            "title": gettext("Departure of %(flight)s") % {"flight": panel.flight},
            "opts": model_admin.model._meta,
            "panel": panel,
            "mode": mode,
            "priority": DENIAL_PRIORITY,
            "care_options": list(CARE.items()),
            "can_deny": request.user.has_perm(DENY),
            "can_pay": request.user.has_perm(PAY),
            **extra,
        },
    )


def _set_priority(request: HttpRequest, flight_id: int) -> HttpResponse:
    if not request.user.has_perm(DENY):
        raise PermissionDenied
    passenger = request.POST.get("passenger", "")
    try:
        changed = set_boarding_priority(
            flight_id=flight_id,
            passenger_id=int(passenger) if passenger.isdigit() else 0,
            reduced_mobility=request.POST.get("reduced_mobility") == "on",
            unaccompanied_minor=request.POST.get("unaccompanied_minor") == "on",
            staff=request.user,
        )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
    else:
        messages.success(
            request, gettext("Boarding priority saved.") if changed else gettext("Nothing changed.")
        )
    return redirect(request.path)


def _act(model_admin, request, flight_id: int) -> HttpResponse:
    action, confirmed = request.POST.get("action"), request.POST.get("confirm") == "yes"
    if action not in ("ask", "deny", "pay"):
        messages.error(request, gettext("Unknown action."))
        return redirect(request.path)
    if not request.user.has_perm(PAY if action == "pay" else DENY):
        raise PermissionDenied
    panel = departure_panel(flight_id=flight_id)
    try:
        if action == "ask":
            try:
                amount = Decimal(request.POST.get("amount", ""))
            except InvalidOperation:
                amount = Decimal(-1)
            if not (0 <= amount <= 10000):
                messages.error(
                    request, gettext("The offer amount must be between 0 and 10,000 EUR.")
                )
                return redirect(request.path)
            if not confirmed:
                return _render(model_admin, request, panel, mode="confirm_ask", amount=amount)
            offers = ask_for_volunteers(flight_id=flight_id, staff=request.user, amount=amount)
            messages.success(
                request,
                gettext("%(count)d passenger(s) asked to volunteer.") % {"count": len(offers)},
            )
        elif action == "deny":
            if not confirmed:
                return _render(model_admin, request, panel, mode="confirm_deny")
            expected = [int(pk) for pk in request.POST.getlist("passenger") if pk.isdigit()]
            remedies = {
                pk: Remedy(request.POST.get(f"remedy_{pk}"))
                for pk in expected
                if request.POST.get(f"remedy_{pk}") in Remedy.values
            }
            care = [c for c in request.POST.getlist("care") if c in CARE]
            denied = deny_boarding(
                flight_id=flight_id,
                staff=request.user,
                expected_passenger_ids=expected,
                remedies=remedies,
                care=care,
            )
            messages.success(
                request,
                gettext("%(count)d passenger(s) denied boarding.") % {"count": len(denied)},
            )
        else:
            entry = Compensation.objects.filter(
                pk=request.POST.get("compensation", "0") or 0, flight_id=flight_id
            ).first()
            reference = request.POST.get("reference", "").strip()[:60]
            if entry is None or not reference:
                messages.error(
                    request, gettext("Choose a ledger entry and give its payout reference.")
                )
                return redirect(request.path)
            if not confirmed:
                return _render(
                    model_admin,
                    request,
                    panel,
                    mode="confirm_pay",
                    entry=entry,
                    reference=reference,
                )
            paid = compensation.pay_out(
                compensation_id=entry.pk, staff=request.user, reference=reference
            )
            messages.success(
                request, gettext("Paid.") if paid else gettext("That entry was already paid.")
            )
    except DomainError as error:
        messages.error(request, f"{error.title}. {error.detail}")
    return redirect(request.path)
