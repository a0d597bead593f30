from django.apps import AppConfig


class SeatkeeperConfig(AppConfig):
    """Project-wide wiring that needs the app registry: the deployment system checks."""

    name = "config"
    label = "seatkeeper_config"
    verbose_name = "Seatkeeper configuration"

    def ready(self) -> None:
        from config import checks  # noqa: F401  (registers the checks)
