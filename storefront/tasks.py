from celery import shared_task

from bookings import waitlist


# The task keeps the name it had in the waitroom app: beat's stored schedule calls it by name
# (installed by waitroom 0002 and `install_schedules`), so a rename would orphan the row.
@shared_task(name="waitroom.close_departed_waitlists", ignore_result=True)
def close_departed_waitlists() -> int:
    """Every 5 min: the waitlists of sales that closed (departed, started, called off)."""
    return waitlist.close_departed_waitlists()
