"""The registry of periodic work that beat sends, stored in django-celery-beat's tables.

Each app declares its own schedules in its own `schedules.py`, calling `register_schedules`;
the kernel's AppConfig imports every app's `schedules` module at startup (as the admin does
with `admin.py`), so nothing here lists another app's tasks.

`install_schedules` is idempotent (keyed by name) and runs from `manage.py install_schedules`
and from the data migrations, which all use the one operation `install_schedules_operation()`;
it takes the model classes so a migration can pass its historical ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import migrations


@dataclass(frozen=True)
class Schedule:
    name: str
    task: str
    every_seconds: int
    # A tick that waited longer than this in the broker (no worker running) is dropped: the
    # next tick does the same work, and a backlog of thousands of relay ticks helps nobody.
    expire_seconds: int


_schedules: dict[str, Schedule] = {}


def register_schedules(*schedules: Schedule) -> None:
    for schedule in schedules:
        existing = _schedules.get(schedule.name)
        if existing is not None and existing != schedule:
            raise ValueError(f"A different schedule named {schedule.name!r} is registered.")
        _schedules[schedule.name] = schedule


def registered_schedules() -> tuple[Schedule, ...]:
    return tuple(_schedules.values())


def install_schedules(*, interval_model: Any = None, task_model: Any = None) -> list[str]:
    if interval_model is None or task_model is None:
        from django_celery_beat.models import IntervalSchedule, PeriodicTask

        interval_model, task_model = IntervalSchedule, PeriodicTask
    installed = []
    for schedule in registered_schedules():
        interval, _ = interval_model.objects.get_or_create(
            every=schedule.every_seconds, period="seconds"
        )
        task_model.objects.update_or_create(
            name=schedule.name,
            defaults={
                "task": schedule.task,
                "interval": interval,
                "crontab": None,
                "solar": None,
                "clocked": None,
                "expire_seconds": schedule.expire_seconds,
                "enabled": True,
                "one_off": False,
            },
        )
        installed.append(schedule.name)
    return installed


def _install_with_historical_models(apps: Any, schema_editor: Any) -> None:
    install_schedules(
        interval_model=apps.get_model("django_celery_beat", "IntervalSchedule"),
        task_model=apps.get_model("django_celery_beat", "PeriodicTask"),
    )


def install_schedules_operation() -> migrations.RunPython:
    """The data-migration step an app adds when it declares a new schedule: installs (or
    updates) every registered schedule, by name.  Its migration must depend on
    django_celery_beat's tables, e.g. `("django_celery_beat", "0018_improve_crontab_helptext")`
    (the existing ones depend on `("bookings", "0004_install_schedules")`, which does)."""
    return migrations.RunPython(_install_with_historical_models, migrations.RunPython.noop)


# The kernel's own periodic work.  The names and task names still say "bookings": beat's
# table and queued messages know them so (they were born there).
register_schedules(
    Schedule("bookings: relay outbox", "bookings.relay_outbox", 1, 10),
    Schedule(
        "bookings: purge published outbox events", "bookings.purge_published_outbox", 6 * 3600, 3600
    ),
    # A no-op without EVENT_LOG_URL; kicked on commit too when it is set.
    Schedule("kernel: relay outbox to the event log", "kernel.relay_event_log", 1, 10),
)
