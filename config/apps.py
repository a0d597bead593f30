from django.apps import AppConfig


class SeatkeeperConfig(AppConfig):
    """Project-wide wiring that needs the app registry: the deployment system checks and the
    metrics hooks.  The `config` package as an app, labelled `ops`."""

    name = "config"
    label = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from config import (
            checks,  # noqa: F401  (registers the checks)
            metrics,
        )

        metrics.install()
