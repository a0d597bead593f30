"""Staff watch an event's sale in the admin: the inventory per category (capacity, sold, held,
available), the seat map, and blocking/unblocking seats through the engine's services."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.models import Inventory, Seat, SeatStatus
from tests.events.factories import EventFactory
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def inventory_rows(html: str) -> dict[str, list[str]]:
    """class code -> the row's cells after the label (capacity, sold, held, available, blocked)."""
    rows = {}
    for code, cells in re.findall(r'<tr data-class="([^"]+)">(.*?)</tr>', html, re.S):
        rows[code] = re.findall(r"<td>([^<]*)</td>", cells)
    return rows


def test_the_change_page_shows_the_inventory_per_category(staff, customer):
    event = EventFactory()
    hold_seats(customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"])
    hold_seatless(customer=customer, sale_id=event.sale_id, fare_class="GA-3", passengers=3)

    html = staff.get(reverse("admin:events_event_change", args=[event.pk])).content.decode()

    rows = inventory_rows(html)
    assert rows["A"] == ["12", "0", "1", "11", "0"]
    assert rows["B"] == ["22", "0", "0", "22", "0"]
    assert rows["GA-3"] == ["50", "0", "3", "47", "0"]
    assert "A — Front stalls" in html and "Standing — Floor (GA)" in html
    listing = staff.get(reverse("admin:events_event_changelist")).content.decode()
    assert "A: 0 / 1 / 11 of 12" in listing and "GA-3: 0 / 3 / 47 of 50" in listing


def test_a_draft_has_no_inventory_yet(staff):
    draft = EventFactory(publish=False)
    html = staff.get(reverse("admin:events_event_change", args=[draft.pk])).content.decode()
    assert 'class="event-inventory"' not in html and 'class="admin-seat-map"' not in html


def test_the_seat_map_blocks_and_unblocks_seats_through_the_engine(staff, customer):
    event = EventFactory()
    hold_seats(customer=customer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-2"])
    change = reverse("admin:events_event_change", args=[event.pk])
    toggle = reverse("admin:events_event_seat_toggle", args=[event.pk])

    html = staff.get(change).content.decode()
    assert html.count('class="seat-cell') == Seat.objects.filter(sale=event.sale).count()
    assert 'value="block:1-1-1"' in html and 'value="block:1-1-2"' not in html  # held
    assert "Stalls row 1 seat 1" in html and "<h3>Balcony</h3>" in html

    blocked = staff.post(toggle, {"seat": "block:1-1-1"}, follow=True)
    assert "Seat 1-1-1 blocked." in messages_of(blocked)
    assert Seat.objects.get(sale=event.sale, seat_no="1-1-1").status == SeatStatus.BLOCKED
    assert Inventory.objects.get(sale=event.sale, fare_class="A").capacity == 11
    assert inventory_rows(blocked.content.decode())["A"] == ["11", "0", "1", "10", "1"]
    assert 'value="unblock:1-1-1"' in blocked.content.decode()

    held = staff.post(toggle, {"seat": "block:1-1-2"}, follow=True)
    assert "Seat 1-1-2 was not in a state to block." in messages_of(held)

    staff.post(toggle, {"seat": "unblock:1-1-1"})
    assert Seat.objects.get(sale=event.sale, seat_no="1-1-1").status == SeatStatus.AVAILABLE
    assert Inventory.objects.get(sale=event.sale, fare_class="A").capacity == 12

    nonsense = staff.post(toggle, {"seat": "paint:1-1-1"}, follow=True)
    assert "Choose a seat on the map." in messages_of(nonsense)
    assert staff.get(toggle).status_code == 405


def test_blocking_needs_the_permission_to_change_events(client):
    event = EventFactory()
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_event"))
    client.force_login(viewer)
    toggle = reverse("admin:events_event_seat_toggle", args=[event.pk])
    assert client.post(toggle, {"seat": "block:1-1-1"}).status_code == 403
    assert Seat.objects.get(sale=event.sale, seat_no="1-1-1").status == SeatStatus.AVAILABLE
