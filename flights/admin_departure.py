"""The flight admin's "Close the gate": a confirmation page showing, per flight, who boarded,
how many tickets would become no-shows and how many standby passengers wait, then (only from
that page, `confirm=yes`) gate close through `flights.departure.close_gate`.  Needs the
`flights.close_gate` permission; the beat does the same at the flight's gate-close time."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils.translation import gettext

from flights.departure import close_gate
from flights.departure_selectors import gate_close_preview
from kernel.errors import DomainError

CLOSE_GATE = "flights.close_gate"


def close_gates(model_admin: admin.ModelAdmin, request, queryset):
    if not request.user.has_perm(CLOSE_GATE):
        raise PermissionDenied
    flights = list(queryset.select_related("sale").order_by("departure_at", "pk"))
    if request.POST.get("confirm") != "yes":
        return TemplateResponse(
            request,
            "admin/flights/flight/close_gate_confirm.html",
            {
                **model_admin.admin_site.each_context(request),
                "title": "Close the gate of these flights?",
                "opts": model_admin.model._meta,
                "previews": [gate_close_preview(flight=flight) for flight in flights],
                "flight_ids": [flight.pk for flight in flights],
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )
    for flight in flights:
        try:
            result = close_gate(flight_id=flight.pk)
        except DomainError as error:
            model_admin.message_user(request, f"{flight.code}: {error.detail}", messages.ERROR)
            continue
        counts = {"flight": flight.code, "no_shows": result.no_shows}
        counts["seated"] = result.standby_seated
        if result.settled:
            text = gettext(
                "%(flight)s: gate closed, %(no_shows)d no-show(s), "
                "%(seated)d standby passenger(s) seated."
            )
        else:
            text = gettext(
                "%(flight)s: gate closed, %(no_shows)d no-show(s), %(seated)d standby "
                "passenger(s) seated; some tickets were busy: the beat finishes them."
            )
        model_admin.message_user(
            request,
            text % counts,
            messages.SUCCESS if result.settled else messages.WARNING,
        )
    return None
