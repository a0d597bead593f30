from celery import shared_task

from waitroom import admission


@shared_task(name="waitroom.admit_shoppers", ignore_result=True)
def admit_shoppers() -> int:
    """Every TICK_SECONDS: one admission tick per open waiting room, in steps."""
    return sum(len(r.admitted) for r in admission.run_admission_tick())
