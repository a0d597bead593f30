from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from bookings import catalogue
from kernel.local_time_admin import LocalTimeAdminMixin, LocalTimeFormMixin, local_column
from waitroom import room_selectors, staff
from waitroom.models import Admission, PresaleCode, PresaleRedemption, RoomChange, WaitingRoom
from waitroom.panel_admin import figures_view, panel_view


def _sale_zone(sale) -> str | None:
    return catalogue.describe(sale).time_zone if sale is not None else None


class WaitingRoomForm(LocalTimeFormMixin, forms.ModelForm):
    """The opening time is typed as the clock at the flight's airport or the event's venue.

    Left empty or out (a script posting the fields it always did), a setting issue 30 added
    keeps its default: code holders first, a calm period of 60 s, a fixed rate."""

    local_time_zones = {"opens_at": "sale"}
    DEFAULTED = (
        "priority_share",
        "safety_net_calm_seconds",
        "admission_mode",
        "adaptive_target_hold_ms",
    )

    class Meta:
        model = WaitingRoom
        fields = [
            "sale",
            "opens_at",
            "admit_per_minute",
            "admission_mode",
            "adaptive_floor_per_minute",
            "adaptive_ceiling_per_minute",
            "adaptive_target_hold_ms",
            "max_inside",
            "stay_seconds",
            "require_verified_email",
            "require_proof_of_work",
            "priority_share",
            "safety_net",
            "safety_net_holds_per_second",
            "safety_net_shoppers",
            "safety_net_calm_seconds",
        ]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in self.DEFAULTED:
            if name in self.fields:
                self.fields[name].required = False

    def clean(self):
        cleaned = super().clean()
        for name in self.DEFAULTED:
            if name in cleaned and cleaned[name] is None:
                cleaned[name] = WaitingRoom._meta.get_field(name).get_default()
        return cleaned

    def zone_of(self, related) -> str | None:
        return _sale_zone(related)


@admin.register(WaitingRoom)
class WaitingRoomAdmin(LocalTimeAdminMixin, admin.ModelAdmin):
    """Staff put a sale (a flight's, an event's) behind a waiting room here and watch it live."""

    list_display = [
        "id",
        "kind",
        "sells",
        "opens_local",
        "admit_per_minute",
        "max_inside",
        "stay_seconds",
        "paused",
        "live_figures",
        "panel_link",
    ]
    form = WaitingRoomForm
    list_filter = ["sale__kind", "paused", "require_verified_email"]
    autocomplete_fields = ["sale"]
    opens_local = local_column(
        "opens_at", lambda room: _sale_zone(room.sale), description="opens (local)"
    )

    def page_zone(self, obj):
        return _sale_zone(obj.sale)

    def get_search_fields(self, request):
        # Staff find a room by what its catalogue calls the item (a flight's code and id).
        return catalogue.search_fields("sale__")

    def get_list_select_related(self, request):
        return ["sale", *catalogue.owner_paths("sale__")]

    readonly_fields = [
        "panel_link",
        "live_figures",
        "seed_commitment",
        "seed_if_published",
        "shuffled_at",
        "shuffled_count",
        "paused",
    ]
    actions = ["pause_admission", "resume_admission"]

    def get_urls(self):
        from django.urls import path

        site = self.admin_site
        return [
            path(
                "<int:room_id>/panel/",
                site.admin_view(lambda request, room_id: panel_view(self, request, room_id)),
                name="waitroom_waitingroom_panel",
            ),
            path(
                "<int:room_id>/panel/figures/",
                site.admin_view(figures_view),
                name="waitroom_waitingroom_figures",
            ),
            *super().get_urls(),
        ]

    @admin.display(description="live panel")
    def panel_link(self, room: WaitingRoom) -> str:
        if room.pk is None:
            return "—"
        url = reverse("admin:waitroom_waitingroom_panel", args=[room.pk])
        return format_html('<a href="{}">{}</a>', url, gettext("live panel"))

    @admin.display(description="sells")
    def sells(self, room: WaitingRoom) -> str:
        return catalogue.describe(room.sale).title

    @admin.display(description="Live: waiting · admitted · inside · sold · left · ETA")
    def live_figures(self, room: WaitingRoom) -> str:
        if room.pk is None:
            return "—"
        f = room_selectors.room_figures(room=room)
        waiting = "Redis down" if f.waiting is None else f"{f.waiting} (+{f.prequeue} pre-queue)"
        eta = "—" if f.eta_seconds is None else f"{f.eta_seconds // 60} min {f.eta_seconds % 60} s"
        return format_html(
            "waiting {} · admitted {} · inside {} · sold {} · left {} · ETA {}{}",
            waiting,
            f.admitted,
            f.inside,
            f.sold,
            f.left,
            eta,
            " · PAUSED" if f.paused else "",
        )

    @admin.display(description="Seed (published after the shuffle)")
    def seed_if_published(self, room: WaitingRoom) -> str:
        return room.seed_published or "not yet published"

    def has_pause_permission(self, request) -> bool:
        return request.user.has_perm("waitroom.pause_waitingroom")

    @admin.action(description="Pause admission", permissions=["pause"])
    def pause_admission(self, request, queryset):
        paused = sum(
            staff.pause_admission(room_id=pk) for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Admission paused for {paused} waiting room(s).")

    @admin.action(description="Resume admission", permissions=["pause"])
    def resume_admission(self, request, queryset):
        resumed = sum(
            staff.resume_admission(room_id=pk) for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Admission resumed for {resumed} waiting room(s).")


@admin.register(Admission)
class AdmissionAdmin(LocalTimeAdminMixin, admin.ModelAdmin):
    """The audit of who was let in: read-only."""

    list_display = ["id", "room", "customer", "order_key", "admitted_local", "expires_local"]
    list_filter = ["room"]
    search_fields = ["customer__username", "=room__id"]
    list_select_related = ["customer", "room__sale"]
    readonly_fields = [f.name for f in Admission._meta.fields]
    admitted_local = local_column(
        "admitted_at", lambda a: _sale_zone(a.room.sale), description="admitted (local)"
    )
    expires_local = local_column(
        "expires_at", lambda a: _sale_zone(a.room.sale), description="expires (local)"
    )

    def page_zone(self, obj):
        return _sale_zone(obj.room.sale)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(PresaleCode)
class PresaleCodeAdmin(admin.ModelAdmin):
    """Staff issue presale codes here (the code is drawn for them; 1 use: single-use)."""

    list_display = ["code", "room", "uses", "uses_allowed", "note", "created_at"]
    list_filter = ["room"]
    search_fields = ["code", "note", "=room__id"]
    raw_id_fields = ["room"]
    readonly_fields = ["uses"]
    exclude = ["sale"]

    def save_model(self, request, obj, form, change):
        obj.sale_id = obj.room.sale_id  # the room's, as waitroom.presale writes it
        super().save_model(request, obj, form, change)


@admin.register(PresaleRedemption)
class PresaleRedemptionAdmin(admin.ModelAdmin):
    """Which account redeemed which code: read-only (a code is bound to that account)."""

    list_display = ["id", "room", "code", "customer", "redeemed_at"]
    list_filter = ["room"]
    search_fields = ["code__code", "customer__username"]
    list_select_related = ["code", "customer"]
    readonly_fields = [f.name for f in PresaleRedemption._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(RoomChange)
class RoomChangeAdmin(admin.ModelAdmin):
    """The audit of the live panel's changes (who, when, before and after): read-only."""

    list_display = ["id", "room", "kind", "changed_by", "changed_at"]
    list_filter = ["room", "kind"]
    list_select_related = ["changed_by", "room__sale"]
    readonly_fields = [f.name for f in RoomChange._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
