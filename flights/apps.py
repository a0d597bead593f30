from django.apps import AppConfig


class FlightsConfig(AppConfig):
    name = "flights"
    verbose_name = "Flights and inventory"

    def ready(self) -> None:
        from bookings import catalogue
        from bookings.models import SaleKind
        from flights.catalogue import FlightCatalogue

        catalogue.register(SaleKind.FLIGHT, FlightCatalogue())
        from flights import outbox_handlers  # noqa: F401  (registers the e-mail consumers)
