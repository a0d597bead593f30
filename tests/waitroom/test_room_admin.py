"""Staff set a protected sale up in the admin, watch its live figures, pause and resume."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from tests.factories import UserFactory
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining
from waitroom.models import WaitingRoom

pytestmark = pytest.mark.django_db(transaction=True)

CHANGELIST = "/admin/waitroom/waitingroom/"


def staff_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_staff_create_a_sale_and_see_live_figures(room_redis, staff_user):
    flight = small_flight(rows=2, overbook=3)
    admin = staff_client(staff_user)
    # Typed as the clock at the flight's origin airport (issue 31, item 12).
    opens = (timezone.now() - timedelta(seconds=1)).astimezone(ZoneInfo(flight.origin.time_zone))
    created = admin.post(
        "/admin/waitroom/waitingroom/add/",
        {
            "sale": flight.sale_id,
            "opens_at_0": opens.strftime("%Y-%m-%d"),
            "opens_at_1": opens.strftime("%H:%M:%S"),
            "admit_per_minute": 60,
            "max_inside": 100,
            "stay_seconds": 600,
        },
    )
    assert created.status_code == 302, created.content.decode()[:2000]
    sale = WaitingRoom.objects.get(sale_id=flight.sale_id)
    for c in make_customers(5):
        joining.join_queue(room_id=sale.pk, customer=c)
    admission.admit_shoppers(room_id=sale.pk, now=sale.opens_at)
    admission.admit_shoppers(room_id=sale.pk, now=sale.opens_at + timedelta(seconds=2))

    page = admin.get(CHANGELIST).content.decode()
    assert (
        "waiting 3 (+0 pre-queue) · admitted 2 · inside 2 · sold 0 · left 15 · ETA 0 min 3 s"
        in page
    )


def test_pausing_needs_the_declared_permission(room_redis):
    flight = small_flight()
    sale = protect(flight)
    plain_staff = UserFactory(is_staff=True)
    plain_staff.user_permissions.add(
        Permission.objects.get(codename="view_waitingroom"),
        Permission.objects.get(codename="change_waitingroom"),
    )
    action = {"action": "pause_admission", "_selected_action": [sale.pk]}
    refused = staff_client(plain_staff).post(CHANGELIST, action)
    assert refused.status_code in (200, 302)
    assert not WaitingRoom.objects.get(pk=sale.pk).paused

    plain_staff.user_permissions.add(Permission.objects.get(codename="pause_waitingroom"))
    plain_staff = type(plain_staff).objects.get(pk=plain_staff.pk)  # fresh permission cache
    staff_client(plain_staff).post(CHANGELIST, action)
    assert WaitingRoom.objects.get(pk=sale.pk).paused
    staff_client(plain_staff).post(
        CHANGELIST, {"action": "resume_admission", "_selected_action": [sale.pk]}
    )
    assert not WaitingRoom.objects.get(pk=sale.pk).paused
