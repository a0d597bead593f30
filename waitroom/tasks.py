from celery import shared_task

from bookings import waitlist
from waitroom import admission


@shared_task(name="waitroom.close_departed_waitlists", ignore_result=True)
def close_departed_waitlists() -> int:
    return waitlist.close_departed_waitlists()


@shared_task(name="waitroom.admit_shoppers", ignore_result=True)
def admit_shoppers() -> int:
    """Every TICK_SECONDS: one admission tick per open protected sale, in steps."""
    return sum(len(r.admitted) for r in admission.run_admission_tick())
