from datetime import UTC

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from flights import admin_booking_classes  # noqa: F401  (registers the BookingClass admin)
from flights.admin_denied import departure_panel_view
from flights.admin_departure import CLOSE_GATE, close_gates
from flights.admin_fares import (  # noqa: F401  (FareInventoryForm: importable from here)
    FareInventoryForm,
    FareInventoryInline,
    apply_fare_limits,
)
from flights.admin_forms import FlightForm
from flights.flight_numbers import claim_flight_number, release_flight_number
from flights.models import Airport, Carrier, FareInventory, Flight, Seat, SeatStatus
from flights.services import (
    announce_cabin_change,
    block_seat,
    open_flight_sale,
    unblock_seat,
)
from kernel.errors import DomainError
from kernel.local_time_admin import LocalTimeAdminMixin, local_text
from kernel.replica_admin import ChangeListFromReplica
from storefront.seat_toggle_admin import SeatToggleAdminMixin


@admin.register(Airport)
class AirportAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "city", "country", "latitude", "longitude", "time_zone"]
    search_fields = ["code", "name", "city", "city_de", "city_ru"]


@admin.register(Carrier)
class CarrierAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "is_eu_carrier"]
    list_filter = ["is_eu_carrier"]
    search_fields = ["code", "name"]


@admin.register(Flight)
class FlightAdmin(
    LocalTimeAdminMixin, ChangeListFromReplica, SeatToggleAdminMixin, admin.ModelAdmin
):
    form = FlightForm
    list_display = [
        "code",
        "origin",
        "destination",
        "departure_local",
        "status",
        "inventory_overview",
        "departure_link",
    ]
    list_filter = ["status", "origin", "destination"]
    search_fields = ["code", "id"]
    date_hierarchy = "departure_at"
    inlines = [FareInventoryInline]
    readonly_fields = ["seat_map", "gate_closed_at", "gate_settled_at"]
    exclude = ["sale"]
    actions = ["mark_departed", "close_gates"]

    def page_zone(self, obj):
        return obj.origin.time_zone

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("origin")
            .prefetch_related("sale__inventories")
        )

    @admin.display(description="inventory (sold / held / left of capacity+overbook)")
    def inventory_overview(self, obj):
        return format_html_join(
            " · ",
            "{}: {} / {} / {} of {}+{}",
            (
                (
                    inv.fare_class.title(),
                    inv.sold,
                    inv.held,
                    inv.available,
                    inv.capacity,
                    inv.overbook_limit,
                )
                for inv in obj.sale.inventories.all()
            ),
        )

    @admin.display(description="seat map")
    def seat_map(self, obj):
        """A clickable map: each free seat is a button that blocks it, each blocked seat one
        that unblocks it (POST with the change form's CSRF token, to `seat_map_toggle`)."""
        if not obj.pk:
            return "—"
        url = reverse("admin:flights_flight_seat_toggle", args=[obj.pk])
        rows: dict[int, list[Seat]] = {}
        for seat in obj.sale.seats.order_by("row", "letter"):
            rows.setdefault(seat.row, []).append(seat)
        exit_rows = set(obj.exit_rows or ())
        cells = []
        for row, seats in rows.items():
            buttons = []
            for seat in seats:
                label = f"{seat.seat_no} {seat.get_status_display().lower()}"
                if seat.status in (SeatStatus.AVAILABLE, SeatStatus.BLOCKED):
                    verb = "block" if seat.status == SeatStatus.AVAILABLE else "unblock"
                    buttons.append(
                        format_html(
                            '<button type="submit" class="seat-cell {}" formaction="{}" '
                            'formmethod="post" name="seat" value="{}:{}" title="{}" '
                            'aria-label="{} seat {}">{}</button>',
                            seat.status.lower(),
                            url,
                            verb,
                            seat.seat_no,
                            label,
                            verb.title(),
                            seat.seat_no,
                            seat.letter,
                        )
                    )
                else:
                    buttons.append(
                        format_html(
                            '<span class="seat-cell {}" title="{}" aria-label="{}">{}</span>',
                            seat.status.lower(),
                            label,
                            label,
                            seat.letter,
                        )
                    )
            cells.append(
                format_html(
                    '<div class="seat-map-row"><span class="seat-map-no">{}{}</span>{}</div>',
                    row,
                    " EXIT" if row in exit_rows else "",
                    format_html_join("", "{}", ((b,) for b in buttons)),
                )
            )
        return format_html(
            "<style>.seat-map-row{{display:flex;gap:3px;margin:2px 0;align-items:center}}"
            ".seat-map-no{{width:4.5em;font-size:11px}}"
            ".seat-cell{{width:2.2em;height:2em;border:1px solid #7fa7d6;border-radius:4px;"
            "text-align:center;font-size:12px;line-height:2em;padding:0;background:#e6f0fb}}"
            ".seat-cell.held{{background:#fff0c2}}.seat-cell.sold{{background:#c9ced8}}"
            ".seat-cell.blocked{{background:#fbdada;text-decoration:line-through}}"
            "button.seat-cell{{cursor:pointer}}</style>"
            '<div class="admin-seat-map">{}</div>'
            "<p>Click a free seat to block it, a blocked one (red) to unblock it. "
            "Yellow: held · grey: sold.</p>",
            format_html_join("", "{}", ((c,) for c in cells)),
        )

    @admin.display(description="departs (local / UTC)", ordering="departure_at")
    def departure_local(self, obj):
        local = local_text(obj.departure_at, obj.origin.time_zone)
        return f"{local} / {obj.departure_at.astimezone(UTC):%H:%M} UTC"

    def save_model(self, request, obj, form, change):
        # The number is claimed in the admin's own transaction (a rare staff write across the
        # global table and the sale's rows: kernel.sharding.CROSS_NODE_WRITES); the form
        # already refused a taken one.
        old = Flight.objects.filter(pk=obj.pk).values_list("code", "departure_at").first()
        if old != (obj.code, obj.departure_at):
            claim_flight_number(code=obj.code, departure_at=obj.departure_at)
        if not change:  # a flight added here gets its sale as create_flight gives one
            obj.sale = open_flight_sale()
            obj.pk = obj.sale.pk
        super().save_model(request, obj, form, change)
        if change and "exit_rows" in form.changed_data:
            announce_cabin_change(flight=obj)
        if old is not None and old != (obj.code, obj.departure_at):
            release_flight_number(code=old[0], departure_at=old[1])

    def save_formset(self, request, form, formset, change):
        if formset.model is not FareInventory:
            return super().save_formset(request, form, formset, change)
        # sold/held move under live traffic: never write the whole row from a stale form.
        for inline_form in formset.forms:
            if not inline_form.has_changed() or not inline_form.cleaned_data:
                continue
            inventory = inline_form.instance
            if inventory.pk is None:
                inventory.sale_id = form.instance.sale_id
                inventory.save()
                continue
            apply_fare_limits(self, request, inventory.pk, inline_form.cleaned_data)
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

    @admin.action(
        description="Close the gate of selected flights (no-shows, seats to standby)",
        permissions=["close_gate"],
    )
    def close_gates(self, request, queryset):
        return close_gates(self, request, queryset)

    def get_urls(self):
        from django.urls import path

        panel = self.admin_site.admin_view(
            lambda request, flight_id: departure_panel_view(self, request, flight_id)
        )
        return [
            path("<int:flight_id>/departure/", panel, name="flights_flight_departure"),
            *super().get_urls(),
        ]

    @admin.display(description="departure")
    def departure_link(self, obj):
        url = reverse("admin:flights_flight_departure", args=[obj.pk])
        return format_html('<a href="{}">departure panel</a>', url)

    def has_close_gate_permission(self, request):
        return request.user.has_perm(CLOSE_GATE)

    @admin.action(description="Mark selected flights as departed", permissions=["change"])
    def mark_departed(self, request, queryset):
        updated = queryset.filter(status="SCHEDULED").update(status="DEPARTED")
        self.message_user(request, f"{updated} flight(s) marked departed.")


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = [
        "seat_no",
        "flight",
        "fare_class",
        "status",
        "surcharge",
        "booking",
        "held_until",
    ]
    list_filter = ["status", "fare_class"]
    search_fields = ["sale__flight__code", "=sale__flight__id", "seat_no"]
    list_select_related = ["sale__flight__origin"]  # the flight names its local time
    actions = ["block", "unblock"]
    readonly_fields = [*(f.name for f in Seat._meta.fields), "flight"]

    @admin.display(description="flight", ordering="sale__flight__departure_at")
    def flight(self, obj):
        return obj.sale.flight

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Block selected seats (take out of sale)", permissions=["change"])
    def block(self, request, queryset):
        self._apply(request, queryset, block_seat, "blocked")

    @admin.action(description="Unblock selected seats (return to sale)", permissions=["change"])
    def unblock(self, request, queryset):
        self._apply(request, queryset, unblock_seat, "unblocked")

    def _apply(self, request, queryset, service, verb):
        changed = 0
        for sale_id, seat_no in queryset.order_by("seat_no").values_list("sale_id", "seat_no"):
            try:
                changed += service(sale_id=sale_id, seat_no=seat_no)
            except DomainError as error:
                self.message_user(request, error.detail, messages.ERROR)
        self.message_user(
            request, f"{changed} seat(s) {verb}; seats not in the right state were left alone."
        )
