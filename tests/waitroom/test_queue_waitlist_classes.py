"""Issue 24, item 10: "a seat is unlikely → join the waitlist" from an event's queue takes
the event's own classes (its price categories), not a flight's fare classes."""

from __future__ import annotations

import pytest
from django.test import Client

from bookings.models import WaitlistEntry, WaitlistStatus
from tests.api.conftest import client_for
from tests.waitroom.test_waitlist_needs_queue import sold_out_event  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_event_queue_joins_the_waitlist_of_its_category(sold_out_event):  # noqa: F811
    event, sale, _shopper, _admitted, unlikely, _bot = sold_out_event
    joined = client_for(unlikely).post(
        f"/api/waiting-rooms/{sale.pk}/waitlist", {"fareClass": "A"}, format="json"
    )
    assert joined.status_code == 201, joined.json()
    assert joined.json()["eventId"] == event.pk and joined.json()["fareClass"] == "A"
    entry = WaitlistEntry.objects.get(customer=unlikely)
    assert (entry.sale_id, entry.fare_class, entry.status) == (
        event.sale_id,
        "A",
        WaitlistStatus.WAITING,
    )


def test_an_event_queue_refuses_a_flight_fare_class_or_none(sold_out_event):  # noqa: F811
    _event, sale, _shopper, _admitted, unlikely, _bot = sold_out_event
    for body in ({"fareClass": "ECONOMY"}, {}):
        refused = client_for(unlikely).post(
            f"/api/waiting-rooms/{sale.pk}/waitlist", body, format="json"
        )
        assert refused.status_code == 400, refused.json()
        assert refused["Content-Type"] == "application/problem+json"
        assert "A" in refused.json()["detail"]
    assert not WaitlistEntry.objects.filter(customer=unlikely).exists()


def test_the_event_queue_page_offers_and_takes_its_categories(sold_out_event):  # noqa: F811
    _event, sale, _shopper, _admitted, unlikely, _bot = sold_out_event
    page = Client()
    page.force_login(unlikely)
    html = page.get(f"/waiting-room/{sale.pk}/").content.decode()
    assert 'name="fare_class"' in html and '<option value="A">' in html
    joined = page.post(f"/waiting-room/{sale.pk}/waitlist/", {"fare_class": "A", "party_size": 1})
    assert joined.status_code == 302 and joined["Location"] == "/bookings/#waitlist"
    assert WaitlistEntry.objects.filter(customer=unlikely, fare_class="A").exists()
