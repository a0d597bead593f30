"""Issue 31, item 11 (polish): Back after paying does not bounce through the sandbox page.
The finished checkout returns to the booking by itself, replacing itself in the history; Back
from the booking then shows the finished checkout and stays there."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from tests.pages.test_payment_pages import hold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 900}, {"width": 390, "height": 844}], ids=["1366", "390"]
)
def test_back_after_paying_stays_on_the_finished_checkout(browser, asgi_server, flight, viewport):
    customer = UserFactory()
    booking = hold(customer, flight)
    page = logged_in_page(browser, asgi_server, customer, viewport=viewport)
    booking_url = re.compile(rf"/bookings/{booking.pk}/$")
    page.goto(f"{asgi_server.url}/bookings/{booking.pk}/")
    page.locator("#pay-form button").click()
    page.fill("#card_number", "4242424242424242")
    page.click("button:has-text('Pay')")
    expect(page.locator("[data-testid=charge-status]")).to_contain_text("paid")
    expect(page).to_have_url(booking_url, timeout=6000)  # back by itself

    page.go_back()
    expect(page).to_have_url(re.compile(r"/sandbox/|/checkout/"))
    expect(page.locator("[data-testid=charge-status]")).to_contain_text("paid")
    page.wait_for_timeout(4000)  # longer than the 3 s return: it must not send us on
    expect(page).not_to_have_url(booking_url)
    expect(page.locator("#returning")).to_be_hidden()
    expect(page.locator("[data-testid=return]")).to_be_visible()
    shot(page, f"sandbox-back-{viewport['width']}")
    assert_no_serious_axe_violations(page)
