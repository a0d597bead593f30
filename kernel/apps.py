from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class KernelConfig(AppConfig):
    """The bottom layer: what every app uses and nothing of ours is imported by (docs/
    architecture.md, "The stack")."""

    name = "kernel"

    def ready(self) -> None:
        # Each app declares its periodic work in its own `schedules.py`, which registers it
        # with kernel.schedules on import (the way admin.py registers with the admin site).
        autodiscover_modules("schedules")
