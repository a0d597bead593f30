from django.contrib import admin

from accounts.models import EmailAddress


@admin.register(EmailAddress)
class EmailAddressAdmin(admin.ModelAdmin):
    """Who proved which address; staff look, the customer's link writes."""

    list_display = ["email", "user", "verified_at", "created_at"]
    list_filter = [("verified_at", admin.EmptyFieldListFilter)]
    search_fields = ["email", "user__username"]
    list_select_related = ["user"]
    readonly_fields = ["user", "email", "verified_at", "created_at"]

    def has_add_permission(self, request):
        return False
