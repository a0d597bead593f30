"""The waitlist's move into the engine (bookings 0013, waitroom 0008) keeps every entry.

Entries are written through the old model (waitroom.WaitlistEntry, as the code before the move
wrote them), the database is migrated forward, and the engine's model must read the same rows
from the same table, with its constraints and its id sequence still in force.  Staff
permissions on entries follow the model.  Migrating backwards hands the rows back untouched.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.errors import AlreadyWaiting
from bookings.models import WaitlistEntry, WaitlistStatus
from bookings.waitlist import join_waitlist
from bookings.waitlist_selectors import waitlist_position
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory, economy_only_layout

BEFORE = [
    ("bookings", "0012_venue_seat_fields"),
    ("waitroom", "0007_protected_sale_by_sale"),
]
FIELDS = (
    "id", "sale_id", "fare_class", "customer_id", "party_size", "status", "offer_id",
    "joined_at", "offered_at", "closed_at",
)  # fmt: skip


def rows(model) -> list[dict]:
    return list(model.objects.order_by("id").values(*FIELDS))


def may_change_entries(user_id: int, app_label: str) -> bool:
    ContentType.objects.clear_cache()  # the migrations moved a row behind the cache's back
    return get_user_model().objects.get(pk=user_id).has_perm(f"{app_label}.change_waitlistentry")


@pytest.mark.django_db(transaction=True)
def test_waitlist_entries_survive_the_move_into_the_engine_and_back():
    flight = FlightFactory(layout=economy_only_layout(rows=1))
    waiting, offered, staff = UserFactory(), UserFactory(), UserFactory(is_staff=True)
    offer = hold_seats(
        customer=offered, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["1A"]
    )
    try:
        old_entry = migrate(BEFORE).get_model("waitroom", "WaitlistEntry")
        now = timezone.now()
        old_entry.objects.create(
            sale_id=flight.sale_id, fare_class="ECONOMY", customer_id=waiting.pk, party_size=2,
            joined_at=now,
        )  # fmt: skip
        old_entry.objects.create(
            sale_id=flight.sale_id, fare_class="ECONOMY", customer_id=offered.pk, party_size=1,
            status="OFFERED", offer_id=offer.pk, joined_at=now, offered_at=now,
        )  # fmt: skip
        staff.user_permissions.add(
            Permission.objects.get(
                content_type__app_label="waitroom", codename="change_waitlistentry"
            )
        )
        before = rows(old_entry)

        migrate(latest())

        assert rows(WaitlistEntry) == before
        assert WaitlistEntry._meta.db_table == "waitroom_waitlistentry"
        assert "bookings_waitlistentry" not in connection.introspection.table_names()
        first, second = WaitlistEntry.objects.order_by("id")
        assert waitlist_position(entry=first) == 1 and second.offer == offer
        assert second.status == WaitlistStatus.OFFERED
        with pytest.raises(AlreadyWaiting):  # the one-active-entry constraint came along
            join_waitlist(
                customer=waiting, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1,
                require_sold_out=False,
            )  # fmt: skip
        newcomer = join_waitlist(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1,
            require_sold_out=False,
        )  # fmt: skip
        assert newcomer.pk > second.pk  # the id sequence went on
        assert may_change_entries(staff.pk, "bookings")
        assert not may_change_entries(staff.pk, "waitroom")
        after = rows(WaitlistEntry)

        old_entry = migrate(BEFORE).get_model("waitroom", "WaitlistEntry")

        assert rows(old_entry) == after
        assert may_change_entries(staff.pk, "waitroom")
    finally:
        migrate(latest())
        ContentType.objects.clear_cache()
