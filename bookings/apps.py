from django.apps import AppConfig


class BookingsConfig(AppConfig):
    name = "bookings"

    def ready(self) -> None:
        # Registers bookings' outbox consumers (tickets, e-mails) with the relay.
        from bookings import outbox_handlers  # noqa: F401
