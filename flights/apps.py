from django.apps import AppConfig


class FlightsConfig(AppConfig):
    name = "flights"
    verbose_name = "Flights and inventory"
