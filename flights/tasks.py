"""Celery tasks of the catalogue: ids in (or none), a service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from bookings import availability


@shared_task(name="flights.rebuild_hold_counters", ignore_result=True)
def rebuild_hold_counters() -> int:
    return availability.rebuild_open_counters()
