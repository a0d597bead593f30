"""The fare-inventory admin's overbooking suggestion: shown beside the current limit with the
data behind it, and accepted only by the action "Accept the suggested overbook limit" (the
`flights.accept_overbook_suggestion` permission, then a confirmation page that can recompute
with another target risk).  Nothing changes a limit without that confirmation."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.utils.html import format_html

from flights.overbooking import (
    DEFAULT_TARGET_RISK,
    OverbookSuggestion,
    accept_overbook_suggestion,
    check_target_risk,
    suggest_overbook_limit,
)
from kernel.errors import DomainError

ACCEPT_SUGGESTION = "flights.accept_overbook_suggestion"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f} %"


def suggestion_html(suggestion: OverbookSuggestion) -> str:
    """One line of the numbers: flights, sold, boarded, no-show rate, the suggestion and the
    denied-boarding risk at the current and the suggested limit."""
    h = suggestion.history
    if suggestion.suggested_limit is None:
        return format_html(
            '<span class="overbook-suggestion none">No suggestion: {} departed flight(s) on '
            "record for this route and class (at least 5 needed).</span>",
            h.flights,
        )
    return format_html(
        '<span class="overbook-suggestion" data-suggested="{}">suggested <b>{}</b> '
        "(now {}) · {} flights, {} sold, {} boarded, {} no-shows ({}) · {} volunteers and {} "
        "denied counted as shows · risk of any denied "
        "boarding {} now, {} suggested (target {})</span>",
        suggestion.suggested_limit,
        suggestion.suggested_limit,
        suggestion.current_limit,
        h.flights,
        h.sold,
        h.boarded,
        h.no_shows,
        percent(h.no_show_rate),
        h.volunteers,
        h.denied,
        percent(suggestion.current_risk),
        percent(suggestion.suggested_risk),
        percent(suggestion.target_risk),
    )


def accept_suggestions(model_admin: admin.ModelAdmin, request, queryset):
    if not request.user.has_perm(ACCEPT_SUGGESTION):
        raise PermissionDenied
    try:
        target = check_target_risk(request.POST.get("target_risk", DEFAULT_TARGET_RISK))
    except DomainError as error:
        model_admin.message_user(request, error.detail, messages.ERROR)
        target = DEFAULT_TARGET_RISK
    inventories = list(queryset.select_related("sale__flight").order_by("sale_id", "fare_class"))
    if request.POST.get("confirm") != "yes":
        return TemplateResponse(
            request,
            "admin/flights/fareinventory/accept_suggestion_confirm.html",
            {
                **model_admin.admin_site.each_context(request),
                "title": "Set the suggested overbook limits?",
                "opts": model_admin.model._meta,
                "rows": [
                    (inv, suggest_overbook_limit(inventory=inv, target_risk=target))
                    for inv in inventories
                ],
                "target_risk": target,
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )
    for inventory in inventories:
        shown = request.POST.get(f"shown_{inventory.pk}", "")
        if not shown.isdigit():
            continue  # no suggestion was shown for it: nothing to accept
        try:
            limit = accept_overbook_suggestion(
                inventory_id=inventory.pk, shown_limit=int(shown), target_risk=target
            )
        except DomainError as error:
            model_admin.message_user(request, f"{inventory}: {error.detail}", messages.ERROR)
            continue
        model_admin.message_user(
            request, f"{inventory.sale.flight} {inventory.fare_class}: overbook limit {limit}."
        )
    return None
