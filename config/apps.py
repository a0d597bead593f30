from django.apps import AppConfig


class OpsConfig(AppConfig):
    """Operations wiring (metrics hooks); the `config` package as an app, labelled `ops`."""

    name = "config"
    label = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from config import metrics

        metrics.install()
