"""Celery tasks of the catalogue: ids in (or none), a service call, safe to run twice."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task

from bookings import availability
from flights import departure, rerouting


@shared_task(name="flights.rebuild_hold_counters", ignore_result=True)
def rebuild_hold_counters() -> int:
    return availability.rebuild_open_counters()


@shared_task(name="flights.close_due_gates", ignore_result=True)
def close_due_gates() -> int:
    return departure.close_due_gates()


@shared_task(
    name="flights.reroute_denied_passenger",
    ignore_result=True,
    autoretry_for=(Exception,),
    retry_backoff=5,
    retry_backoff_max=600,
    max_retries=8,
)
def reroute_denied_passenger_task(flight_id: int, denied_id: int) -> bool:
    return rerouting.reroute(flight_id=flight_id, denied_id=denied_id) is not None


@shared_task(name="flights.reroute_pending", ignore_result=True)
def reroute_pending() -> int:
    """The safety net for a lost rerouting task (a broker restart)."""
    return rerouting.reroute_pending(grace=timedelta(minutes=1))
