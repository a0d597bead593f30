"""The online check-in page in headless Chromium, at 1366x900 and 390x844: a passenger picks a
free seat on the cabin map, checks in, and another customer's open check-in page sees that
seat taken live (the seat map's websocket); axe shows no serious violation."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from bookings.models import Passenger
from tests.flights.departing import booking_of, seated, small_flight
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.test_browser import logged_in_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]

VIEWPORTS = pytest.mark.parametrize(
    "viewport",
    [{"width": 1366, "height": 900}, {"width": 390, "height": 844}],
    ids=["desktop-1366", "phone-390"],
)


def open_check_in(browser, server, booking, viewport):
    page = logged_in_page(browser, server, booking.customer, viewport=viewport)
    page.goto(f"{server.url}/bookings/{booking.pk}/")
    page.click("#online-check-in-link")
    # A loaded CI machine can take more than the default 5 s to serve the check-in page.
    expect(page.locator("#checkin-form")).to_be_visible(timeout=30_000)
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    return page


@VIEWPORTS
def test_a_seat_picked_on_the_map_is_checked_in_and_shown_taken_to_others_live(
    browser, asgi_server, viewport
):
    flight = small_flight(rows=3, departure_at=timezone.now() + timedelta(hours=3))
    first, second = seated(flight, "1A", "1B")
    (other,) = seated(flight, "2A")
    mine, theirs = booking_of(first), booking_of(other)
    page = open_check_in(browser, asgi_server, mine, viewport)
    watcher = open_check_in(browser, asgi_server, theirs, viewport)
    assert_no_serious_axe_violations(page)

    page.check(f"#choosing-{second.passenger_id}")
    page.click('.cabin-map button[data-seat="3C"]')
    expect(page.locator(f"#seat-{second.passenger_id}")).to_have_value("3C")
    page.click("#checkin-button")

    expect(page.locator("#checked-in")).to_be_visible()
    expect(watcher.locator('.cabin-map button[data-seat="3C"]')).to_be_disabled()
    expect(watcher.locator('.cabin-map button[data-seat="1B"]')).to_be_enabled()
    assert Passenger.objects.get(pk=second.passenger_id).seat.seat_no == "3C"
    assert Passenger.objects.get(pk=first.passenger_id).seat.seat_no == "1A"
    assert_no_serious_axe_violations(page)
