"""Issue 31, item 11 (polish): the hold page breaks the total into the fare per place and each
seat's surcharge, adding up to what is charged."""

from __future__ import annotations

import pytest
from django.urls import reverse

from bookings.models import Inventory
from tests.factories import named_hold

pytestmark = pytest.mark.django_db


def test_the_hold_page_shows_fare_and_surcharge(client, customer, flight):
    booking = named_hold(customer=customer, flight=flight, seats=("12A", "20A"))
    fare = Inventory.objects.get(sale=flight.sale, fare_class="ECONOMY").price
    assert booking.amount == 2 * fare + 15  # 12A is an exit row with legroom: +€15
    client.force_login(customer)
    html = client.get(reverse("bookings:detail", args=[booking.pk])).content.decode()
    lines = html.split('id="price-lines"')[1].split("</table>")[0]
    assert f"Fare: 2 \u00d7 €{fare:.2f}" in lines and f"€{2 * fare:.2f}" in lines
    assert "Seat surcharge, 12A" in lines and "+€15.00" in lines
    assert "20A" not in lines  # no surcharge, no line


def test_no_breakdown_without_surcharges(client, customer, flight):
    booking = named_hold(customer=customer, flight=flight, seats=("20A",))
    client.force_login(customer)
    html = client.get(reverse("bookings:detail", args=[booking.pk])).content.decode()
    assert 'id="price-lines"' not in html
