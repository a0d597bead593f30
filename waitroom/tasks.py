from celery import shared_task

from waitroom import services


@shared_task(name="waitroom.close_departed_waitlists", ignore_result=True)
def close_departed_waitlists() -> int:
    return services.close_departed_waitlists()
