from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.module_loading import autodiscover_modules


class KernelConfig(AppConfig):
    """The bottom layer: what every app uses and nothing of ours is imported by (docs/
    architecture.md, "The stack")."""

    name = "kernel"

    def ready(self) -> None:
        # Each app declares its periodic work in its own `schedules.py`, which registers it
        # with kernel.schedules on import (the way admin.py registers with the admin site).
        autodiscover_modules("schedules")
        post_migrate.connect(_apply_lock_timeout, sender=self)


def _apply_lock_timeout(*, using: str, **kwargs) -> None:
    from kernel.locking import apply_lock_timeout

    apply_lock_timeout(using=using)
