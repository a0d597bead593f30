"""The Celery app.  Settings live in config/settings/workers.py under CELERY_*; the reasons for them
in docs/workers.md.  Without REDIS_URL the broker is in-process (memory://), for the embedded
single-process mode."""

import logging
import os

from celery import Celery
from celery.signals import before_task_publish, setup_logging, task_postrun, task_prerun

from config.request_id import get_request_id, new_request_id, reset_request_id, set_request_id

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("seatkeeper")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

REQUEST_ID_HEADER = "request_id"
logger = logging.getLogger("seatkeeper.tasks")
_tokens: dict[str, object] = {}


@setup_logging.connect
def _use_django_logging(loglevel: int | str | None = None, **_: object) -> None:
    # Celery keeps its hands off logging: workers log exactly as the web does (settings.LOGGING,
    # so LOG_FORMAT=json gives the same JSON lines with the request id).
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        # `celery worker --loglevel` still applies to Celery's own lines ("… ready.",
        # "Connected to …"), which tools and tests wait for.
        logging.getLogger("celery").setLevel(loglevel)


@before_task_publish.connect
def _carry_request_id(headers: dict | None = None, **_: object) -> None:
    # A task queued while serving a request (or running a task) carries its request id.
    request_id = get_request_id()
    if headers is not None and request_id and REQUEST_ID_HEADER not in headers:
        headers[REQUEST_ID_HEADER] = request_id


@task_prerun.connect
def _adopt_request_id(task_id: str | None = None, task=None, **_: object) -> None:
    request = getattr(task, "request", None)
    request_id = getattr(request, REQUEST_ID_HEADER, None) or (
        (getattr(request, "headers", None) or {}).get(REQUEST_ID_HEADER)
    )
    _tokens[task_id or ""] = set_request_id(request_id or get_request_id() or new_request_id())
    logger.info("task started", extra={"task_name": getattr(task, "name", ""), "task_id": task_id})


@task_postrun.connect
def _task_finished(task_id: str | None = None, task=None, state=None, **_: object) -> None:
    logger.info(
        "task finished",
        extra={"task_name": getattr(task, "name", ""), "task_id": task_id, "state": state},
    )
    token = _tokens.pop(task_id or "", None)
    if token is not None:
        try:
            reset_request_id(token)
        except ValueError:  # set in another context (eager task in a thread); just clear it
            set_request_id(None)
    # A task may run in a thread of a long-lived process (the test worker, the embedded
    # server): give back connections that are broken or past CONN_MAX_AGE, as a request would.
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:  # an eager task inside a caller's transaction
            connection.close_if_unusable_or_obsolete()
