from django.contrib import admin

from kernel.models import OutboxEvent


@admin.register(OutboxEvent)
class OutboxEventAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "event_type",
        "aggregate_type",
        "aggregate_id",
        "created_at",
        "published_at",
    ]
    list_filter = ["event_type", ("published_at", admin.EmptyFieldListFilter)]
    search_fields = ["=aggregate_id", "event_type"]
    readonly_fields = [f.name for f in OutboxEvent._meta.fields]

    def has_add_permission(self, request):
        return False
