from django.apps import AppConfig


class EventsConfig(AppConfig):
    name = "events"
    verbose_name = "Events and venues"

    def ready(self) -> None:
        from bookings import catalogue
        from bookings.models import SaleKind
        from events.catalogue import EventCatalogue

        catalogue.register(SaleKind.EVENT, EventCatalogue())
