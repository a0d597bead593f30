"""A waiting customer sees their offer appear in "My bookings" without reloading."""

import pytest
from playwright.sync_api import expect

from bookings.lifecycle import cancel_hold
from bookings.waitlist import join_waitlist
from tests.bookings.test_waitlist import sold_out_flight
from tests.factories import UserFactory
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_offer_appears_live_on_my_bookings(browser, asgi_server):
    flight, holders = off_loop(sold_out_flight)
    waiting = UserFactory()
    off_loop(
        join_waitlist, customer=waiting, sale_id=flight.sale_id, fare_class="ECONOMY", party_size=1
    )
    page = logged_in_page(browser, asgi_server, waiting)
    page.goto(f"{asgi_server.url}/bookings/")
    expect(page.locator(".waitlist-entry .position")).to_have_text("number 1")

    off_loop(cancel_hold, customer=holders[0].customer, booking_id=holders[0].pk)

    # No reload by the test: the page notices the offer itself.
    expect(page.locator(".waitlist-entry .offer")).to_be_visible(timeout=5000)
    expect(page.get_by_role("link", name="Pay for your offered seats")).to_be_visible()
    shot(page, "20-waitlist-offer-live")
