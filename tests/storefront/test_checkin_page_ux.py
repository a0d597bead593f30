"""Issue 15, staff: the gate page says its verdict once, lists today's departures first with
local time next to UTC, finds a flight by search, and has a main landmark."""

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.bookings.test_checkin import ticketed
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db


def test_the_verdict_title_is_printed_once(client, staff_user, customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    client.force_login(staff_user)
    page = client.post(reverse("bookings:checkin"), {"flight": flight.pk, "code": ticket.code})
    html = page.content.decode()
    assert html.count("Valid: board") == 1
    assert "<main>" in html and "</main>" in html


def test_todays_departures_come_first_with_local_and_utc_time(client, staff_user):
    later = FlightFactory(code="SK900")  # in 20 days
    soon = FlightFactory(
        code="SK901",
        departure_at=timezone.now() + timedelta(hours=3),
        arrival_at=timezone.now() + timedelta(hours=5),
    )
    client.force_login(staff_user)
    html = client.get(reverse("bookings:checkin")).content.decode()
    assert html.index("SK901") < html.index("SK900")
    assert html.index("Departing within 24 hours") < html.index("SK901") < html.index("Later")
    local = soon.departure_at.astimezone(ZoneInfo(soon.origin.time_zone))
    option = re.search(r"SK901[^<]*", html).group(0)
    assert f"{local:%H:%M}" in option and "local" in option
    assert f"{soon.departure_at.astimezone(ZoneInfo('UTC')):%H:%M} UTC" in option
    assert later.code in html


def test_search_narrows_the_list_and_boarding_still_works(client, staff_user, customer, flight):
    _, (ticket, _) = ticketed(customer, flight)
    other = FlightFactory(code="ZZ777")
    client.force_login(staff_user)
    html = client.get(reverse("bookings:checkin"), {"q": flight.code}).content.decode()
    assert flight.code in html and other.code not in html
    assert (
        "No flight matches"
        in client.get(reverse("bookings:checkin"), {"q": "QQ0"}).content.decode()
    )
    scanned = client.post(
        reverse("bookings:checkin"), {"q": "QQ0", "flight": flight.pk, "code": ticket.code}
    )
    assert 'data-outcome="valid"' in scanned.content.decode()
