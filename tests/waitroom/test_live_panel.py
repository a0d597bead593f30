"""Issue 30, item 6, the staff's live panel of one waiting room: its figures (page, JSON poll
and /metrics say the same), pause, resume and rate changes confirmed on a second step and
audited (who, when, before and after), each guarded by its permission, with controls."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from bookings.customer_holds import hold_seatless
from kernel import metrics as kernel_metrics
from kernel.errors import InvalidRequest
from tests.factories import StaffFactory, UserFactory
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining, panel, staff
from waitroom.models import AdmissionMode, RoomChange, RoomChangeKind, WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def room(room_redis):
    flight = small_flight(rows=2, overbook=3)  # 15 units
    return protect(flight, opens_at=timezone.now() - timedelta(minutes=1), rate=60)


def url(room, tail: str = "") -> str:
    return f"/admin/waitroom/waitingroom/{room.pk}/panel/{tail}"


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def staff_with(*codenames: str):
    user = UserFactory(is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def test_the_figures_follow_the_room(room):
    people = make_customers(4)
    for person in people:
        joining.join_queue(room_id=room.pk, customer=person)
    now = timezone.now()
    admission.admit_shoppers(room_id=room.pk, now=now)  # the shuffle; 1 a second at 60/min
    admission.admit_shoppers(room_id=room.pk, now=now + timedelta(seconds=2))
    hold_seatless(customer=people[0], sale_id=room.sale_id, fare_class="ECONOMY", passengers=2)
    room.refresh_from_db()
    figures = panel.panel_figures(room=room, now=now + timedelta(seconds=3))
    admitted = room.admissions.count()
    assert admitted >= 1
    assert figures["admittedPerMinute"] == admitted == figures["insideNow"]
    assert figures["waiting"] == 4 - admitted
    assert figures["holdsPerMinute"] == 1 and figures["salesPerMinute"] == 0
    assert figures["unitsLeft"] == 13 and figures["unitsHeld"] == 2
    assert figures["proofOfWork"] is None and figures["ratePerMinute"] == 60


def test_the_eta_given_is_compared_with_the_eta_that_came_true(room):
    now = timezone.now()
    admission.admit_shoppers(room_id=room.pk, now=now)  # shuffled: joins go FIFO
    people = make_customers(3)
    for person in people:
        joining.join_queue(room_id=room.pk, customer=person, now=now)
    promised = sorted((e.eta_promised_at - e.joined_at).total_seconds() for e in room.entries.all())
    assert promised == [1, 2, 3]  # 60/min: a second per place
    admission.admit_shoppers(room_id=room.pk, now=now + timedelta(seconds=5))
    figures = panel.panel_figures(room=room, now=now + timedelta(seconds=6))
    assert figures["etaGivenSeconds"] == 2
    assert figures["etaCameTrueSeconds"] == 5  # all three came in at 5 s: later than told


def test_pause_resume_and_rates_are_audited(room):
    boss = StaffFactory()
    paused = staff.do_change_admission(room_id=room.pk, by=boss, kind=RoomChangeKind.PAUSE)
    assert paused.before["paused"] is False and paused.after["paused"] is True
    assert paused.changed_by == boss and paused.changed_at is not None
    # Already paused: nothing changes, nothing is audited.
    assert staff.do_change_admission(room_id=room.pk, by=boss, kind=RoomChangeKind.PAUSE) is None
    staff.do_change_admission(room_id=room.pk, by=boss, kind=RoomChangeKind.RESUME)
    rate = staff.do_change_admission(
        room_id=room.pk, by=boss, kind=RoomChangeKind.RATE, rates={"admit_per_minute": 90}
    )
    assert (rate.before["admit_per_minute"], rate.after["admit_per_minute"]) == (60, 90)
    assert list(RoomChange.objects.filter(room=room).values_list("kind", flat=True)) == [
        "RATE",
        "RESUME",
        "PAUSE",
    ]


def test_bad_rates_are_refused_and_change_nothing(room):
    WaitingRoom.objects.filter(pk=room.pk).update(
        admission_mode=AdmissionMode.ADAPTIVE,
        adaptive_floor_per_minute=10,
        adaptive_ceiling_per_minute=100,
    )
    with pytest.raises(InvalidRequest):
        staff.do_change_admission(
            room_id=room.pk,
            by=StaffFactory(),
            kind=RoomChangeKind.RATE,
            rates={"adaptive_floor_per_minute": 200},  # above the ceiling
        )
    room.refresh_from_db()
    assert room.adaptive_floor_per_minute == 10 and not RoomChange.objects.exists()
    # Control: a ceiling lowered below the live rate pulls the rate down with it.
    staff.do_change_admission(
        room_id=room.pk,
        by=StaffFactory(),
        kind=RoomChangeKind.RATE,
        rates={"adaptive_ceiling_per_minute": 40},
    )
    room.refresh_from_db()
    assert room.admit_per_minute == 40


def test_a_change_waits_for_its_confirmation(room):
    client = logged_in(StaffFactory())
    asked = client.post(url(room), {"action": "PAUSE"})
    assert asked.status_code == 200 and b"confirm-yes" in asked.content
    room.refresh_from_db()
    assert not room.paused and not RoomChange.objects.exists()
    done = client.post(url(room), {"action": "PAUSE", "confirm": "yes"})
    assert done.status_code == 302
    room.refresh_from_db()
    assert room.paused and RoomChange.objects.get().kind == "PAUSE"


def test_bad_input_is_a_message_and_changes_nothing(room):
    client = logged_in(StaffFactory())
    for body in ({"action": "EXPLODE"}, {"action": "RATE", "rate": "-3", "confirm": "yes"}):
        answer = client.post(url(room), body, follow=True)
        assert answer.status_code == 200 and list(answer.context["messages"])
    room.refresh_from_db()
    assert room.admit_per_minute == 60 and not RoomChange.objects.exists()


def test_permissions_guard_the_panel_and_each_change(room):
    viewer = logged_in(staff_with("view_waitingroom"))
    assert viewer.get(url(room)).status_code == 200
    figures = viewer.get(url(room, "figures/"))
    assert figures.status_code == 200 and json.loads(figures.content)["room"] == room.pk
    assert viewer.post(url(room), {"action": "PAUSE", "confirm": "yes"}).status_code == 403
    assert viewer.post(url(room), {"action": "RATE", "rate": "5"}).status_code == 403
    pauser = logged_in(staff_with("view_waitingroom", "pause_waitingroom"))
    assert pauser.post(url(room), {"action": "PAUSE", "confirm": "yes"}).status_code == 302
    assert pauser.post(url(room), {"action": "RATE", "rate": "5"}).status_code == 403
    room.refresh_from_db()
    assert room.paused and room.admit_per_minute == 60
    # Control: staff without the view permission see neither the page nor the figures.
    stranger = logged_in(staff_with("view_flight"))
    assert stranger.get(url(room)).status_code == 403
    assert stranger.get(url(room, "figures/")).status_code == 403


def test_the_same_figures_go_to_metrics(room, settings):
    settings.METRICS = {**settings.METRICS, "ENABLED": True, "TOKEN": "t", "ALLOWED_IPS": []}
    kernel_metrics.register_waiting_room(
        length=panel.open_room_lengths, panel=panel.open_room_panels
    )
    for person in make_customers(3):
        joining.join_queue(room_id=room.pk, customer=person)
    text = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer t").content.decode()
    line = f'seatkeeper_waiting_room_panel{{figure="unitsLeft",room="{room.pk}"}} 15.0'
    assert line in text
    assert f'seatkeeper_waiting_room_length{{room="{room.pk}"}} 3.0' in text
