"""Issue 31, item 11: picking an exit-row seat on the flight's seat picker shows the exit-row
conditions with a box to confirm them (hidden again for other seats); confirmed, the seat is
held.  At both widths, with axe clean."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bookings.models import Booking
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 900}, {"width": 390, "height": 844}], ids=["1366", "390"]
)
def test_an_exit_seat_asks_for_the_exit_row_conditions(browser, asgi_server, flight, viewport):
    page = logged_in_page(browser, asgi_server, UserFactory(), viewport=viewport)
    page.goto(f"{asgi_server.url}/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=1")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    conditions = page.locator("#exit-row-conditions")
    expect(conditions).to_be_hidden()

    page.click("#seat-14A")  # not an exit row
    expect(conditions).to_be_hidden()
    page.click("#seat-14A")
    page.click("#seat-12A")  # the A320's over-wing exit row
    expect(conditions).to_be_visible()
    expect(conditions).to_contain_text("15 or older, able and willing to help in an emergency")
    conditions.scroll_into_view_if_needed()
    shot(page, f"exit-row-conditions-{viewport['width']}")
    assert_no_serious_axe_violations(page)

    page.fill("#name-1", "Ana Lima")
    page.click("#hold-button")  # unconfirmed: the browser asks for the box, nothing is sent
    expect(page.locator("#exit-row-confirmed")).to_be_focused()
    assert not Booking.objects.exists()

    page.check("#exit-row-confirmed")
    page.click("#hold-button")
    expect(page.locator("h1")).to_have_text("Your seats are held")
    assert Booking.objects.get().passengers.get().seat.seat_no == "12A"
