"""waitroom 0013 forward and back with live rows: queue entries and admissions of two rooms
(two sales) get their own room's sale, and going back drops only the copied column."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory
from waitroom import staff
from waitroom.models import Admission, QueueEntry

BEFORE = [("waitroom", "0012_safety_net")]


def place(models, room_id: int, sale_id: int | None) -> None:
    """One admitted place with its audit row, as the code on either side writes them."""
    now = timezone.now()
    sale = {} if sale_id is None else {"sale_id": sale_id}
    customer = UserFactory()
    entry = models["QueueEntry"].objects.create(
        room_id=room_id, customer_id=customer.pk, status="ADMITTED", joined_at=now,
        admitted_at=now, admission_expires_at=now + timedelta(minutes=10), **sale,
    )  # fmt: skip
    models["Admission"].objects.create(
        room_id=room_id, entry_id=entry.pk, customer_id=customer.pk, order_key=0,
        admitted_at=now, expires_at=now + timedelta(minutes=10), **sale,
    )  # fmt: skip


def rooms_of_two_sales() -> list:
    """Two waiting rooms, each in front of a flight's sale of its own."""
    return [
        staff.open_waiting_room(
            sale_id=FlightFactory().sale_id, opens_at=timezone.now(), admit_per_minute=60,
            max_inside=10,
        )
        for _ in range(2)
    ]  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_queue_entries_and_admissions_get_their_rooms_sale_forward_and_back():
    rooms = rooms_of_two_sales()
    new, old_room = rooms
    place({"QueueEntry": QueueEntry, "Admission": Admission}, new.pk, new.sale_id)
    try:
        old = migrate(BEFORE)
        OldEntry = old.get_model("waitroom", "QueueEntry")
        assert "sale" not in {f.name for f in OldEntry._meta.get_fields()}
        old_models = {m: old.get_model("waitroom", m) for m in ("QueueEntry", "Admission")}
        place(old_models, old_room.pk, None)  # written by the old code

        migrate(latest())
        for room in rooms:
            assert set(QueueEntry.objects.filter(room=room).values_list("sale_id", flat=True)) == {
                room.sale_id
            }
            assert set(Admission.objects.filter(room=room).values_list("sale_id", flat=True)) == {
                room.sale_id
            }
        back = migrate(BEFORE)
        assert back.get_model("waitroom", "QueueEntry").objects.count() == 2
        assert back.get_model("waitroom", "Admission").objects.count() == 2
    finally:
        migrate(latest())
