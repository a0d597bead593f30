"""Celery tasks of the catalogue: ids in (or none), a service call, safe to run twice."""

from __future__ import annotations

from celery import shared_task

from bookings import availability
from flights import departure


@shared_task(name="flights.rebuild_hold_counters", ignore_result=True)
def rebuild_hold_counters() -> int:
    return availability.rebuild_open_counters()


@shared_task(name="flights.close_due_gates", ignore_result=True)
def close_due_gates() -> int:
    return departure.close_due_gates()
