import pytest
from django.core.management import call_command
from django.utils import timezone

from events.demo import load_event_demo
from events.models import Event, EventStatus, Venue
from events.rules import is_open
from events.selectors import unpriced_places

pytestmark = pytest.mark.django_db


def test_event_demo_is_complete_and_idempotent(capsys):
    call_command("load_demo", "--days", "1")
    assert "2 venues, 5 events (5 new)" in capsys.readouterr().out
    assert load_event_demo().events_created == 0
    assert Venue.objects.count() == 2 and Event.objects.count() == 5
    now = timezone.now()
    events = list(Event.objects.all())
    assert all(e.status == EventStatus.ON_SALE and not unpriced_places(event=e) for e in events)
    soon = [e for e in events if not is_open(e, now=now)]
    assert [e.name for e in soon] == ["White Nights Festival — opening"]
