"""The admin's seat-map toggle, one mixin for every catalogue (storefront/seat_toggle_admin.py)
with one permission rule: change permission on the catalogue item AND bookings.change_seat.
Each half of the rule is shown to be needed: without it the toggle is 403 and the seat and
its class's capacity stay as they were."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from bookings.models import Inventory, Seat, SeatStatus
from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory

pytestmark = pytest.mark.django_db

CATALOGUES = {
    # catalogue: (make the item, its toggle's URL name, its change permission, a free seat)
    "flight": (FlightFactory, "admin:flights_flight_seat_toggle", "change_flight", "30F"),
    "event": (EventFactory, "admin:events_event_seat_toggle", "change_event", "1-1-1"),
}


def staff_with(*codenames: str):
    user = UserFactory(is_staff=True)
    for app_label, codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def seat_and_capacity(item, seat_no: str) -> tuple[str, int]:
    seat = Seat.objects.get(sale_id=item.sale_id, seat_no=seat_no)
    inventory = Inventory.objects.get(sale_id=item.sale_id, fare_class=seat.fare_class)
    return seat.status, inventory.capacity


@pytest.mark.parametrize("kind", CATALOGUES)
def test_change_on_the_item_and_on_seats_may_block_and_unblock(client, kind):
    make, url_name, change_item, seat_no = CATALOGUES[kind]
    item = make()
    app_label = item._meta.app_label
    status, capacity = seat_and_capacity(item, seat_no)
    assert status == SeatStatus.AVAILABLE
    client.force_login(staff_with((app_label, change_item), ("bookings", "change_seat")))
    toggle = reverse(url_name, args=[item.pk])

    assert client.post(toggle, {"seat": f"block:{seat_no}"}).status_code == 302
    assert seat_and_capacity(item, seat_no) == (SeatStatus.BLOCKED, capacity - 1)
    assert client.post(toggle, {"seat": f"unblock:{seat_no}"}).status_code == 302
    assert seat_and_capacity(item, seat_no) == (SeatStatus.AVAILABLE, capacity)


@pytest.mark.parametrize("kind", CATALOGUES)
@pytest.mark.parametrize("lacking", ["item", "seat"])
def test_lacking_either_permission_is_refused_and_changes_nothing(client, kind, lacking):
    make, url_name, change_item, seat_no = CATALOGUES[kind]
    item = make()
    app_label = item._meta.app_label
    granted = {"item": (app_label, change_item), "seat": ("bookings", "change_seat")}
    del granted[lacking]
    client.force_login(staff_with(*granted.values()))
    before = seat_and_capacity(item, seat_no)

    response = client.post(reverse(url_name, args=[item.pk]), {"seat": f"block:{seat_no}"})

    assert response.status_code == 403
    assert seat_and_capacity(item, seat_no) == before


@pytest.mark.parametrize("kind", CATALOGUES)
def test_a_blocked_seat_stays_blocked_for_a_user_lacking_the_seat_permission(client, kind):
    make, url_name, change_item, seat_no = CATALOGUES[kind]
    item = make()
    toggle = reverse(url_name, args=[item.pk])
    client.force_login(staff_with((item._meta.app_label, change_item), ("bookings", "change_seat")))
    client.post(toggle, {"seat": f"block:{seat_no}"})
    blocked = seat_and_capacity(item, seat_no)
    assert blocked[0] == SeatStatus.BLOCKED

    client.force_login(staff_with((item._meta.app_label, change_item)))
    assert client.post(toggle, {"seat": f"unblock:{seat_no}"}).status_code == 403
    assert seat_and_capacity(item, seat_no) == blocked
