from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html

from bookings.models import WaitlistEntry, WaitlistStatus
from waitroom import room, room_selectors
from waitroom.models import Admission, ProtectedSale


@admin.register(WaitlistEntry)
class WaitlistEntryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "sale",
        "fare_class",
        "customer",
        "party_size",
        "status",
        "joined_at",
        "offer",
        "offered_at",
    ]
    list_filter = ["status", "fare_class"]
    search_fields = [
        "sale__flight__code",
        "=sale__flight__id",
        "customer__username",
        "customer__email",
    ]
    list_select_related = ["sale__flight", "customer", "offer"]
    readonly_fields = [f.name for f in WaitlistEntry._meta.fields]
    actions = ["remove_entries"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # entries are removed (status LEFT), never deleted: join order is history

    @admin.action(
        description="Remove selected waiting entries from the waitlist", permissions=["change"]
    )
    def remove_entries(self, request, queryset):
        removed = queryset.filter(status=WaitlistStatus.WAITING).update(
            status=WaitlistStatus.LEFT, closed_at=timezone.now()
        )
        self.message_user(
            request, f"{removed} waiting entr{'y' if removed == 1 else 'ies'} removed."
        )


@admin.register(ProtectedSale)
class ProtectedSaleAdmin(admin.ModelAdmin):
    """Staff put a flight behind the waiting room here and watch it live."""

    list_display = [
        "id",
        "kind",
        "flight",
        "opens_at",
        "admit_per_minute",
        "max_inside",
        "stay_seconds",
        "paused",
        "live_figures",
    ]
    list_filter = ["kind", "paused", "require_verified_email"]
    search_fields = ["flight__code", "=flight__id"]
    list_select_related = ["flight"]
    raw_id_fields = ["flight", "sale"]

    def save_model(self, request, obj, form, change):
        # A flight's waiting room guards the flight's own sale unless staff named one.
        if obj.sale_id is None and obj.flight_id is not None:
            obj.sale_id = obj.flight.sale_id
        super().save_model(request, obj, form, change)

    readonly_fields = [
        "live_figures",
        "seed_commitment",
        "seed_if_published",
        "shuffled_at",
        "shuffled_count",
        "paused",
    ]
    actions = ["pause_admission", "resume_admission"]

    @admin.display(description="Live: waiting · admitted · inside · sold · left · ETA")
    def live_figures(self, sale: ProtectedSale) -> str:
        if sale.pk is None:
            return "—"
        f = room_selectors.sale_figures(sale=sale)
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
    def seed_if_published(self, sale: ProtectedSale) -> str:
        return sale.seed_published or "not yet published"

    def has_pause_permission(self, request) -> bool:
        return request.user.has_perm("waitroom.pause_protectedsale")

    @admin.action(description="Pause admission", permissions=["pause"])
    def pause_admission(self, request, queryset):
        paused = sum(
            room.pause_admission(sale_id=pk) for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Admission paused for {paused} sale(s).")

    @admin.action(description="Resume admission", permissions=["pause"])
    def resume_admission(self, request, queryset):
        resumed = sum(
            room.resume_admission(sale_id=pk) for pk in queryset.values_list("pk", flat=True)
        )
        self.message_user(request, f"Admission resumed for {resumed} sale(s).")


@admin.register(Admission)
class AdmissionAdmin(admin.ModelAdmin):
    """The audit of who was let in: read-only."""

    list_display = ["id", "sale", "customer", "order_key", "admitted_at", "expires_at"]
    list_filter = ["sale"]
    search_fields = ["customer__username", "=sale__id"]
    list_select_related = ["customer"]
    readonly_fields = [f.name for f in Admission._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
