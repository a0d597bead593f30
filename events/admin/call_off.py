"""The event admin's "Cancel selected events": first a confirmation page listing every live
booking and the refund it would get, then (only from that page, `confirm=yes`) the
cancellation through `events.services.cancel_event`.  Shaped like the Booking admin's
cancel with refund (storefront/admin.py): the staff member sees the money before it moves."""

from __future__ import annotations

from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext

from events import services
from events.call_off_selectors import call_off_preview
from kernel.errors import DomainError

#: Cancelling an event cancels (and refunds) its bookings: the Booking admin's permission.
CANCEL_BOOKINGS = "bookings.change_booking"


def call_off_events(model_admin: admin.ModelAdmin, request, queryset):
    events = list(queryset.select_related("venue").order_by("starts_at", "pk"))
    if request.POST.get("confirm") != "yes":
        now = timezone.now()
        previews = [call_off_preview(event=event, by=request.user, now=now) for event in events]
        return TemplateResponse(
            request,
            "admin/events/event/cancel_confirm.html",
            {
                **model_admin.admin_site.each_context(request),
                "title": gettext("Cancel events and refund their bookings?"),
                "opts": model_admin.model._meta,
                "previews": previews,
                "event_ids": [event.pk for event in events],
                "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
            },
        )
    for event in events:
        try:
            result = services.cancel_event(event_id=event.pk, cancelled_by=request.user)
        except DomainError as error:
            model_admin.message_user(request, error.detail, messages.ERROR)
            continue
        if result:
            model_admin.message_user(
                request,
                gettext(
                    "%(name)s is cancelled: %(bookings)d booking(s) cancelled, "
                    "%(refunds)d refund(s) queued."
                )
                % {
                    "name": event.name,
                    "bookings": result.bookings_cancelled,
                    "refunds": result.refunds,
                },
            )
    return None
