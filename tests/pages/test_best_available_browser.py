"""Issue 29 in headless Chromium, at 1366x900 and 390x844: the event page's best-available
form fits the width, passes axe, and its button holds adjacent seats that strand nobody."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bookings.models import Booking, Seat
from tests.bookings.test_best_available import hall_event
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from tests.pages.test_seat_plan_browser import VIEWPORTS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]


@VIEWPORTS
def test_the_best_available_button_holds_the_best_seats(browser, asgi_server, viewport):
    event = hall_event()
    customer = UserFactory()
    is_phone = viewport["width"] < 500
    page = logged_in_page(
        browser, asgi_server, customer, viewport=viewport, is_mobile=is_phone, has_touch=is_phone
    )
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    form = page.locator(".best-available-form")
    expect(form).to_be_visible()
    found = form.bounding_box()
    assert found and found["x"] >= 0 and found["x"] + found["width"] <= viewport["width"]
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    assert_no_serious_axe_violations(page)
    page.fill("#best-quantity", "2")
    page.fill("#best-name", "Clara Schumann")
    page.click("#best-available")
    expect(page.locator("h1")).to_have_text("Your seats are held")
    shot(page, f"29-best-available-{viewport['width']}")
    booking = Booking.objects.get(customer=customer)
    assert sorted(Seat.objects.filter(booking=booking).values_list("seat_no", flat=True)) == [
        "1-1-3",
        "1-1-4",
    ]
