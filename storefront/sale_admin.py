"""The engine's sales, registered only so staff pick one by what it sells (a search box on
the waiting room's form) instead of typing its id: hidden from the index, read-only."""

from django.contrib import admin

from bookings import catalogue
from bookings.models import Sale


@admin.register(Sale)
class SaleAdmin(admin.ModelAdmin):
    ordering = ["-pk"]
    search_fields = ["=id"]  # and each catalogue's own lookups (a flight's code, an event's name)

    def get_search_fields(self, request):
        return [*self.search_fields, *catalogue.search_fields()]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related(*catalogue.detail_paths(), *catalogue.owner_paths())
        )

    def has_module_permission(self, request):
        return False  # plumbing: reached through the forms that pick a sale

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
