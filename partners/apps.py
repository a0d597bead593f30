from django.apps import AppConfig


class PartnersConfig(AppConfig):
    name = "partners"
    verbose_name = "Partners: outgoing webhooks"

    def ready(self) -> None:
        # Registers the outbox consumers that turn domain events into webhook deliveries.
        from partners import outbox_handlers  # noqa: F401
