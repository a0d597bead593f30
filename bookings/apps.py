from django.apps import AppConfig


class BookingsConfig(AppConfig):
    name = "bookings"

    def ready(self) -> None:
        from django.contrib import admin

        # Registers bookings' outbox consumers (tickets, e-mails) with the relay.
        from bookings import handlers  # noqa: F401
        from config.admin_actions import declare_library_action_permissions

        # Admin autodiscovery ran already (django.contrib.admin is installed first).
        declare_library_action_permissions(admin.site)
