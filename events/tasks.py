"""Celery tasks of the events catalogue: ids in (or none), a service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from events import lifecycle


@shared_task(name="events.finish_events", ignore_result=True)
def finish_events() -> int:
    return lifecycle.finish_events()
