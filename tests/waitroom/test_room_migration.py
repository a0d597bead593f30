"""waitroom 0010: `ProtectedSale` becomes `WaitingRoom` and keeps every row.

Rooms, queue entries and admissions made by today's code survive a migration backwards (the
old model's `flight` and `kind` are filled again from the sale) and forwards again, with the
same ids; a room written by the old code (old shape) arrives named by its sale alone; staff
keep the permission to pause.  Control: a room naming a flight that is not its sale's stops
the migration instead of losing what the room was for.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from tests.bookings.test_sale_migration import latest, migrate
from tests.events.factories import EventFactory
from tests.factories import UserFactory
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining
from waitroom.models import Admission, QueueEntry, WaitingRoom
from waitroom.staff import open_waiting_room

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("waitroom", "0009_room_requires_verified_email")]
ROOM_FIELDS = ("id", "sale_id", "opens_at", "admit_per_minute", "max_inside", "seed", "paused")


def may_pause(user_id: int, codename: str) -> bool:
    ContentType.objects.clear_cache()
    return get_user_model().objects.get(pk=user_id).has_perm(f"waitroom.{codename}")


def rooms(model) -> list[dict]:
    return list(model.objects.order_by("id").values(*ROOM_FIELDS))


def entries(model, room_field: str) -> set[tuple]:
    return set(model.objects.values_list("id", room_field, "customer_id", "order_key"))


def test_rooms_entries_and_admissions_survive_the_rename_both_ways(room_redis):
    flight = small_flight(rows=2)
    event = EventFactory()
    flight_room = protect(flight, opens_at=timezone.now() - timedelta(minutes=1))
    event_room = open_waiting_room(
        sale_id=event.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    for customer in make_customers(3):
        joining.join_queue(room_id=flight_room.pk, customer=customer)
    admission.admit_shoppers(room_id=flight_room.pk, now=flight_room.opens_at)  # the shuffle
    assert admission.admit_shoppers(room_id=flight_room.pk, now=timezone.now()).admitted
    staff = UserFactory(is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="pause_waitingroom"))
    before_rooms = rooms(WaitingRoom)
    before_entries = entries(QueueEntry, "room_id")
    before_admissions = entries(Admission, "room_id")
    try:
        old = migrate(BEFORE)
        OldRoom = old.get_model("waitroom", "ProtectedSale")
        assert rooms(OldRoom) == before_rooms
        kinds = dict(OldRoom.objects.values_list("id", "kind"))
        flights = dict(OldRoom.objects.values_list("id", "flight_id"))
        assert kinds == {flight_room.pk: "FLIGHT", event_room.pk: "EVENT"}
        assert flights == {flight_room.pk: flight.pk, event_room.pk: None}
        assert entries(old.get_model("waitroom", "QueueEntry"), "sale_id") == before_entries
        assert entries(old.get_model("waitroom", "Admission"), "sale_id") == before_admissions
        assert may_pause(staff.pk, "pause_protectedsale")

        # A room as the old code wrote it: named by its flight, for the flight's sale.
        other = small_flight()
        written = OldRoom.objects.create(
            kind="FLIGHT",
            flight_id=other.pk,
            sale_id=other.sale_id,
            opens_at=timezone.now(),
            admit_per_minute=5,
            max_inside=5,
        )

        migrate(latest())

        assert rooms(WaitingRoom)[:2] == before_rooms
        arrived = WaitingRoom.objects.get(pk=written.pk)
        assert (arrived.sale_id, arrived.kind) == (other.sale_id, "FLIGHT")
        assert str(arrived) == f"Waiting room {written.pk} for flight {other.code}"
        assert entries(QueueEntry, "room_id") == before_entries
        assert entries(Admission, "room_id") == before_admissions
        assert may_pause(staff.pk, "pause_waitingroom")
        # The moved rows still work: the id sequence goes on, the queue still admits.
        assert (
            open_waiting_room(
                sale_id=small_flight().sale_id,
                opens_at=timezone.now(),
                admit_per_minute=1,
                max_inside=1,
            ).pk
            > written.pk
        )
        joining.join_queue(room_id=flight_room.pk, customer=UserFactory())
    finally:
        migrate(latest())
        ContentType.objects.clear_cache()


def test_a_room_naming_another_sales_flight_stops_the_migration():
    """Control: the check before the `flight` column goes can fail."""
    flight, stranger = small_flight(), small_flight()
    try:
        OldRoom = migrate(BEFORE).get_model("waitroom", "ProtectedSale")
        OldRoom.objects.create(
            kind="FLIGHT",
            flight_id=flight.pk,
            sale_id=stranger.sale_id,  # not the flight's own sale
            opens_at=timezone.now(),
            admit_per_minute=5,
            max_inside=5,
        )
        with pytest.raises(RuntimeError, match="name a flight that is not their sale's"):
            migrate(latest())
        OldRoom.objects.all().delete()
    finally:
        migrate(latest())
