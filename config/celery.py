"""The Celery app.  Settings live in config/settings.py under CELERY_*; the reasons for them
in docs/workers.md.  Without REDIS_URL the broker is in-process (memory://), for the embedded
single-process mode."""

import os

from celery import Celery
from celery.signals import task_postrun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("seatkeeper")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_postrun.connect
def _close_old_connections(**_: object) -> None:
    # A task may run in a thread of a long-lived process (the test worker, the embedded
    # server): give back connections that are broken or past CONN_MAX_AGE, as a request would.
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:  # an eager task inside a caller's transaction
            connection.close_if_unusable_or_obsolete()
