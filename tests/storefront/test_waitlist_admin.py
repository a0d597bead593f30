"""Staff see the waitlist (an engine model, bookings.WaitlistEntry) in the admin the waiting
room registers, and remove waiting entries there."""

import pytest
from django.urls import reverse

from bookings.models import WaitlistStatus
from bookings.waitlist import join_waitlist
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def test_staff_see_and_remove_waitlist_entries_in_admin(client, staff_user):
    flight = FlightFactory(layout=economy_only_layout(rows=1))
    entry = join_waitlist(
        customer=UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        party_size=2,
        require_sold_out=False,
    )
    client.force_login(staff_user)
    listing = client.get(reverse("admin:bookings_waitlistentry_changelist"), {"q": flight.code})
    assert listing.status_code == 200 and entry.customer.username in listing.text
    response = client.post(
        reverse("admin:bookings_waitlistentry_changelist"),
        {"action": "remove_entries", "_selected_action": [entry.pk]},
    )
    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.LEFT
