"""Issue 24, item 11: a protected sale that closed, ended or was called off admits nobody,
and the admission tick no longer visits it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from events.models import Event
from events.services import cancel_event
from tests.events.factories import EventFactory
from tests.waitroom.room_helpers import make_customers, no_limits
from waitroom import admission, joining, tasks
from waitroom.models import Admission, QueueEntry, QueueStatus
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db(transaction=True)


def queued_event(customers: int = 3):
    """A protected event whose pre-queue was shuffled, everybody still waiting."""
    event = EventFactory()
    t0 = timezone.now() - timedelta(seconds=30)
    sale = open_waiting_room(
        sale_id=event.sale_id, opens_at=t0, admit_per_minute=600, max_inside=100
    )
    for customer in make_customers(customers):
        joining.join_queue(room_id=sale.pk, customer=customer)
    assert admission.admit_shoppers(room_id=sale.pk, now=t0).admitted == []  # the shuffle only
    return event, sale


@pytest.fixture
def quick_ticks(settings, room_redis):
    no_limits(settings)
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "ADMISSION_STEPS": 1}


def end_event(event):
    Event.objects.filter(pk=event.pk).update(
        on_sale_at=timezone.now() - timedelta(days=2),
        starts_at=timezone.now() - timedelta(minutes=1),
    )


@pytest.mark.parametrize("close", [cancel_event, end_event], ids=["called-off", "started"])
def test_a_closed_sale_gets_no_ticks_and_admits_nobody(quick_ticks, close):
    closed_event, closed = queued_event()
    _open_event, still_open = queued_event()
    if close is cancel_event:
        cancel_event(event_id=closed_event.pk)
    else:
        end_event(closed_event)

    admitted = tasks.admit_shoppers()  # the beat task, as the worker runs it

    assert admitted == 3  # the control: the open sale's queue moves
    assert Admission.objects.filter(room=still_open).count() == 3
    assert not Admission.objects.filter(room=closed).exists()
    assert QueueEntry.objects.filter(room=closed, status=QueueStatus.WAITING).count() == 3
    visited = [r.room_id for r in admission.run_admission_tick()]
    assert closed.pk not in visited and still_open.pk in visited


def test_an_admission_step_called_directly_admits_nobody_to_a_called_off_sale(quick_ticks):
    event, sale = queued_event()
    cancel_event(event_id=event.pk)
    step = admission.admit_shoppers(room_id=sale.pk)
    assert step.skipped == "sale closed" and step.admitted == []
    assert not Admission.objects.filter(room=sale).exists()
