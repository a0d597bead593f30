"""The admin's seat-map toggle, for every catalogue's change page (a flight, an event): one
click blocks a free seat or unblocks a blocked one, through the engine's services (a blocked
seat leaves its class's capacity; unblocking gives it back and offers it to the waitlist).
Held and sold seats are shown on the map, never changed by it."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse

from bookings.inventory import block_seat, unblock_seat
from kernel.errors import DomainError

# Changing a seat changes the engine's Seat row as well as the item it is sold by.
CHANGE_SEAT = "bookings.change_seat"


class SeatToggleAdminMixin:
    """For a `ModelAdmin` of a catalogue item with a `sale_id`: the POST-only URL
    `admin:<app>_<model>_seat_toggle` (its map's buttons post `seat=block:<no>` or
    `unblock:<no>` there) and the one permission rule: change permission on the item and
    `bookings.change_seat`."""

    def get_urls(self):
        opts = self.model._meta
        return [
            path(
                "<int:object_id>/seat-map/",
                self.admin_site.admin_view(self.seat_map_toggle),
                name=f"{opts.app_label}_{opts.model_name}_seat_toggle",
            ),
            *super().get_urls(),
        ]

    def may_toggle_seats(self, request: HttpRequest, obj) -> bool:
        return self.has_change_permission(request, obj) and request.user.has_perm(CHANGE_SEAT)

    def seat_map_toggle(self, request: HttpRequest, object_id: int) -> HttpResponse:
        opts = self.model._meta
        change_url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[object_id])
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        obj = get_object_or_404(self.model, pk=object_id)
        if not self.may_toggle_seats(request, obj):
            raise PermissionDenied
        verb, _, seat_no = request.POST.get("seat", "").partition(":")
        service = {"block": block_seat, "unblock": unblock_seat}.get(verb)
        if service is None or not seat_no or obj.sale_id is None:
            self.message_user(request, "Choose a seat on the map.", messages.ERROR)
            return redirect(change_url)
        try:
            changed = service(sale_id=obj.sale_id, seat_no=seat_no)
        except DomainError as error:
            self.message_user(request, error.detail, messages.ERROR)
        else:
            if changed:
                self.message_user(request, f"Seat {seat_no} {verb}ed.")
            else:
                self.message_user(
                    request, f"Seat {seat_no} was not in a state to {verb}.", messages.WARNING
                )
        return redirect(change_url)
