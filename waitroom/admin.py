from django.contrib import admin
from django.utils import timezone

from waitroom.models import WaitlistEntry, WaitlistStatus


@admin.register(WaitlistEntry)
class WaitlistEntryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "flight",
        "fare_class",
        "customer",
        "party_size",
        "status",
        "joined_at",
        "offer",
        "offered_at",
    ]
    list_filter = ["status", "fare_class"]
    search_fields = ["flight__code", "=flight__id", "customer__username", "customer__email"]
    list_select_related = ["flight", "customer", "offer"]
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
