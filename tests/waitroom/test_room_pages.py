"""The queue pages: join, see your place, poll it, the waitlist offer beyond the horizon."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from bookings.models import WaitlistEntry
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining
from waitroom.models import QueueEntry

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_join_from_the_page_then_see_and_poll_the_place(room_redis):
    flight = small_flight(rows=1, overbook=0)  # 6 units -> 9 people inside the horizon
    t0 = timezone.now()
    sale = protect(flight, opens_at=t0, rate=60)
    customers = make_customers(11)
    for c in customers[:10]:
        joining.join_queue(room_id=sale.pk, customer=c)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle; no credit yet
    me = customers[10]
    page = logged_in(me)
    url = f"/waiting-room/{sale.pk}/"

    assert "Join the queue" in page.get(url).content.decode()
    assert page.post(url + "join/")["Location"] == url
    assert page.post(url + "join/")["Location"] == url  # again: same place
    assert QueueEntry.objects.filter(room=sale, customer=me).count() == 1

    html = page.get(url).content.decode()
    assert 'id="queue-position">11<' in html
    assert 'role="status"' in html and 'aria-live="polite"' in html
    assert sale.seed in html  # published after the shuffle
    polled = page.get(url + "status.json").json()
    assert polled["status"] == "WAITING" and polled["position"] == 11
    assert polled["unlikely"] is True and polled["etaSeconds"] is None

    # Beyond the horizon: one click onto the waitlist, the place is kept.
    joined = page.post(url + "waitlist/", {"fare_class": "ECONOMY", "party_size": 1})
    assert joined.status_code == 302 and joined["Location"].endswith("#waitlist")
    assert WaitlistEntry.objects.filter(customer=me, sale=flight.sale).count() == 1
    assert page.get(url + "status.json").json()["position"] == 11
    bad = page.post(url + "waitlist/", {"fare_class": "NOPE", "party_size": 0})
    assert bad["Location"] == url
    assert WaitlistEntry.objects.filter(customer=me).count() == 1


def test_anonymous_visitors_are_sent_to_log_in_and_unknown_rooms_are_404(room_redis):
    flight = small_flight()
    sale = protect(flight)
    anonymous = Client()
    assert anonymous.get(f"/waiting-room/{sale.pk}/")["Location"].startswith("/accounts/login/")
    assert anonymous.post(f"/waiting-room/{sale.pk}/join/")["Location"].startswith(
        "/accounts/login/"
    )
    assert not QueueEntry.objects.exists()
    assert logged_in(make_customers(1)[0]).get("/waiting-room/999999/").status_code == 404
