from datetime import UTC

from django import forms
from django.contrib import admin, messages
from django.db.models import F
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from bookings.models import Sale
from flights import admin_booking_classes  # noqa: F401  (registers the BookingClass admin)
from flights.admin_denied import departure_panel_view
from flights.admin_departure import CLOSE_GATE, close_gates
from flights.admin_forms import FlightForm
from flights.admin_overbooking import ACCEPT_SUGGESTION, accept_suggestions, suggestion_html
from flights.flight_numbers import claim_flight_number, release_flight_number
from flights.models import Airport, Carrier, FareInventory, Flight, Seat, SeatStatus
from flights.overbooking import suggest_overbook_limit
from flights.services import (
    announce_cabin_change,
    block_seat,
    open_flight_sale,
    set_fare_limits,
    unblock_seat,
)
from kernel.errors import DomainError
from kernel.local_time_admin import LocalTimeAdminMixin, local_text
from kernel.replica_admin import ChangeListFromReplica
from payments.currency import NotChargeable, check_chargeable
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


class FareInventoryForm(forms.ModelForm):
    class Meta:
        model = FareInventory
        fields = ["fare_class", "capacity", "overbook_limit", "price", "currency"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():  # a table row's inputs: the column header is far
            field.widget.attrs.setdefault("aria-label", str(field.label))

    def clean(self):
        cleaned = super().clean()
        price, currency = cleaned.get("price"), cleaned.get("currency")
        if price is not None and currency:
            try:
                check_chargeable(price, currency)
            except NotChargeable as exc:
                self.add_error("price", str(exc))
        if self.instance.pk and not self.errors:
            taken = self.instance.sold + self.instance.held
            limit = cleaned["capacity"] + cleaned["overbook_limit"]
            if limit < taken:
                raise forms.ValidationError(
                    f"Capacity + overbook limit ({limit}) cannot go below the {self.instance.sold} "
                    f"sold and {self.instance.held} held units."
                )
        return cleaned


def apply_fare_limits(model_admin, request, inventory_id: int, cleaned_data: dict) -> None:
    """Write only the staff-editable limits (sold/held move under live traffic and must never
    be written back from a stale form); a refusal becomes an admin message."""
    try:
        set_fare_limits(
            inventory_id=inventory_id,
            capacity=cleaned_data["capacity"],
            overbook_limit=cleaned_data["overbook_limit"],
            price=cleaned_data["price"],
        )
    except DomainError as error:
        model_admin.message_user(request, error.detail, messages.ERROR)


class FareInventoryInline(admin.TabularInline):
    """The flight's fare classes, edited on the flight page: they hang off its sale, so the
    inline formset is the sale's, handed the flight's sale."""

    model = FareInventory
    form = FareInventoryForm
    extra = 0
    readonly_fields = ["sold", "held", "left"]
    fields = [
        "fare_class",
        "capacity",
        "overbook_limit",
        "price",
        "currency",
        "sold",
        "held",
        "left",
    ]

    def __init__(self, parent_model, admin_site):
        super().__init__(Sale, admin_site)

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, getattr(obj, "sale", None), **kwargs)

        class FlightSaleFormSet(formset):
            def __init__(self, *args, instance=None, **kwargs):
                if isinstance(instance, Flight):
                    instance = instance.sale if instance.sale_id else Sale()
                super().__init__(*args, instance=instance, **kwargs)

            def add_fields(self, form, index):
                super().add_fields(form, index)
                if "DELETE" in form.fields:
                    form.fields["DELETE"].widget.attrs["aria-label"] = "Delete"

        return FlightSaleFormSet

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, getattr(obj, "sale", None))

    @admin.display(description="left")
    def left(self, obj):
        return obj.available if obj.pk else "—"


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


@admin.register(FareInventory)
class FareInventoryAdmin(admin.ModelAdmin):
    """Inventory overview across flights: what staff watch on a sale day."""

    list_display = [
        "flight",
        "fare_class",
        "capacity",
        "overbook_limit",
        "sold",
        "held",
        "left",
        "suggested",
        "price",
        "currency",
    ]
    list_filter = ["fare_class", "sale__flight__origin", "sale__flight__destination"]
    search_fields = ["sale__flight__code", "=sale__flight__id"]
    list_select_related = ["sale__flight__origin"]  # the flight names its local time
    readonly_fields = ["flight", "fare_class", "sold", "held", "overbook_suggestion"]
    fields = [
        "flight",
        "fare_class",
        "capacity",
        "overbook_limit",
        "overbook_suggestion",
        "price",
        "currency",
        "sold",
        "held",
    ]
    form = FareInventoryForm
    actions = ["accept_suggestions"]

    @admin.display(description="suggested overbook limit (from measured no-shows)")
    def overbook_suggestion(self, obj):
        return suggestion_html(suggest_overbook_limit(inventory=obj)) if obj.pk else "—"

    @admin.action(
        description="Accept the suggested overbook limit of selected fare classes",
        permissions=["accept_suggestion"],
    )
    def accept_suggestions(self, request, queryset):
        return accept_suggestions(self, request, queryset)

    def has_accept_suggestion_permission(self, request):
        return request.user.has_perm(ACCEPT_SUGGESTION)

    @admin.display(
        description="left", ordering=F("capacity") + F("overbook_limit") - F("sold") - F("held")
    )
    def left(self, obj):
        return obj.available

    @admin.display(description="flight", ordering="sale__flight__departure_at")
    def flight(self, obj):
        return obj.sale.flight

    @admin.display(description="suggested limit")
    def suggested(self, obj):
        suggestion = suggest_overbook_limit(inventory=obj)
        return "—" if suggestion.suggested_limit is None else suggestion.suggested_limit

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        apply_fare_limits(self, request, obj.pk, form.cleaned_data)
