import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from kernel.schedules import (
    Schedule,
    install_schedules_operation,
    register_schedules,
    registered_schedules,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_migrations_installed_the_beat_schedules_and_the_command_is_idempotent():
    expected = {
        "bookings.relay_outbox": 1,
        "bookings.expire_holds": 30,
        "bookings.redispatch_stale_notifications": 60,
        "bookings.purge_published_outbox": 6 * 3600,
        "waitroom.close_departed_waitlists": 300,
        "payments.tasks.purge_idempotency_keys_task": 3600,
        "payments.tasks.retry_pending_refunds": 300,
        "flights.rebuild_hold_counters": 15,
        "flights.close_due_gates": 60,
        "flights.reroute_pending": 60,
        "partners.resend_due_deliveries": 30,
        "waitroom.admit_shoppers": 2,
        "payments.tasks.reconcile_stuck_payments_task": 60,
        "kernel.relay_event_log": 1,
        "events.finish_events": 60,
        "payments.queue_sandbox_deliveries": 1,
    }

    def installed():
        return {
            t.task: (t.interval.every, t.interval.period, t.enabled, t.expire_seconds)
            for t in PeriodicTask.objects.select_related("interval").filter(
                name__in=[s.name for s in registered_schedules()]
            )
        }

    if not installed():
        # A transactional test that ran earlier on this test worker flushed every table on
        # teardown, the migrations' rows with them: run the migrations' own step again.
        from django.apps import apps as django_apps

        install_schedules_operation().code(django_apps, None)
    before = installed()
    assert {task: v[0] for task, v in before.items()} == expected
    assert all(period == "seconds" and enabled for _, period, enabled, _ in before.values())
    PeriodicTask.objects.filter(task="bookings.relay_outbox").update(enabled=False)

    call_command("install_schedules", stdout=open(os.devnull, "w"))  # noqa: SIM115
    call_command("install_schedules", stdout=open(os.devnull, "w"))  # noqa: SIM115

    assert installed() == before  # re-enabled, nothing duplicated
    assert PeriodicTask.objects.filter(
        name__in=[s.name for s in registered_schedules()]
    ).count() == len(registered_schedules())
    assert IntervalSchedule.objects.filter(every=1, period="seconds").count() == 1


def test_without_redis_celery_uses_the_in_memory_broker_and_finds_the_tasks():
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "CELERY_BROKER_URL"}}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    script = (
        "import django, json; django.setup();"
        "from config.celery import app; app.loader.import_default_modules();"
        "print(json.dumps([app.conf.broker_url, sorted(t for t in app.tasks"
        " if t.startswith(('bookings.', 'flights.', 'payments.', 'waitroom.', 'partners.',"
        " 'kernel.', 'events.')))]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    broker, tasks = json.loads(out.stdout.strip().splitlines()[-1])
    assert broker == "memory://localhost/"  # in-process; the host only quiets kombu
    assert {s.task for s in registered_schedules()} <= set(tasks)
    assert {"bookings.send_notification", "bookings.redeliver_event"} <= set(tasks)


def test_each_app_registers_its_own_schedules_and_a_clash_is_refused():
    by_module = {s.task.split(".")[0] for s in registered_schedules()}
    assert by_module == {
        "bookings",
        "flights",
        "payments",
        "waitroom",
        "partners",
        "kernel",
        "events",
    }
    relay = next(s for s in registered_schedules() if s.task == "bookings.relay_outbox")
    register_schedules(relay)  # the same declaration twice (a module re-imported) is fine
    with pytest.raises(ValueError, match="relay outbox"):
        register_schedules(Schedule(relay.name, "bookings.something_else", 1, 1))
    assert relay in registered_schedules()
