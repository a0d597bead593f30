from django.apps import AppConfig


class CheckinSyncConfig(AppConfig):
    name = "checkin_sync"
    verbose_name = "Check-in sync (event-log consumer)"
    default_auto_field = "django.db.models.BigAutoField"
