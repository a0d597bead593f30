"""The periodic work that beat sends, stored in django-celery-beat's tables.

`install_schedules` is idempotent (keyed by name) and runs from a data migration and from
`manage.py install_schedules`; it takes the model classes so the migration can pass its
historical ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Schedule:
    name: str
    task: str
    every_seconds: int
    # A tick that waited longer than this in the broker (no worker running) is dropped: the
    # next tick does the same work, and a backlog of thousands of relay ticks helps nobody.
    expire_seconds: int


SCHEDULES = (
    Schedule("bookings: relay outbox", "bookings.relay_outbox", 1, 10),
    Schedule("bookings: expire holds", "bookings.expire_holds", 30, 25),
    Schedule(
        "bookings: resend stale notifications", "bookings.redispatch_stale_notifications", 60, 55
    ),
    Schedule(
        "bookings: purge published outbox events", "bookings.purge_published_outbox", 6 * 3600, 3600
    ),
    Schedule(
        "waitroom: close waitlists of departed flights",
        "waitroom.close_departed_waitlists",
        300,
        280,
    ),
    Schedule("waitroom: admit shoppers", "waitroom.admit_shoppers", 2, 2),
    Schedule(
        "payments: purge expired idempotency keys",
        "payments.tasks.purge_idempotency_keys_task",
        3600,
        3000,
    ),
    Schedule("payments: retry pending refunds", "payments.tasks.retry_pending_refunds", 300, 280),
    # The hold filters' availability counters drift only towards "too high" in normal work;
    # this corrects the rare drift low (a give-back lost while Redis was away) within seconds.
    Schedule("flights: rebuild hold counters", "flights.rebuild_hold_counters", 15, 12),
    Schedule(
        "partners: resend overdue webhook deliveries", "partners.resend_due_deliveries", 30, 25
    ),
    Schedule(
        "payments: reconcile stuck payments",
        "payments.tasks.reconcile_stuck_payments_task",
        60,
        55,
    ),
)


def install_schedules(*, interval_model: Any = None, task_model: Any = None) -> list[str]:
    if interval_model is None or task_model is None:
        from django_celery_beat.models import IntervalSchedule, PeriodicTask

        interval_model, task_model = IntervalSchedule, PeriodicTask
    installed = []
    for schedule in SCHEDULES:
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
