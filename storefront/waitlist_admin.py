"""The admin of waitlist entries (the engine's `WaitlistEntry`): read-only, and staff remove
waiting entries (status LEFT), never delete them.  Registered from storefront/admin.py."""

from django.contrib import admin
from django.utils import timezone

from bookings import catalogue
from bookings.models import WaitlistEntry, WaitlistStatus


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
    search_fields = ["customer__username", "customer__email"]

    def get_search_fields(self, request):
        # Staff find entries by what the catalogue calls the item (a flight's code and id).
        return [*catalogue.search_fields("sale__"), *self.search_fields]

    def get_list_select_related(self, request):
        return ["sale", *catalogue.owner_paths("sale__"), "customer", "offer"]

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
