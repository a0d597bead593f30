"""Issue 31, item 13, in Chromium: the staff's sale-day admin pages fit 1366 px (the fare table
and seat maps included), open with the sale-day index, and pass axe."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.events.factories import EventFactory
from tests.factories import StaffFactory, UserFactory, named_hold
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


def page_width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366", "390"])
def test_staff_change_pages_fit_the_screen(browser, asgi_server, flight, viewport):
    staff = StaffFactory()
    event = EventFactory()
    booking = named_hold(customer=UserFactory(), flight=flight)
    page = logged_in_page(browser, asgi_server, staff, viewport=viewport)
    tag = viewport["width"]
    for name, path in [
        ("flight", f"/admin/flights/flight/{flight.pk}/change/"),
        ("event", f"/admin/events/event/{event.pk}/change/"),
        ("booking", f"/admin/bookings/booking/{booking.pk}/change/"),
    ]:
        page.goto(asgi_server.url + path)
        shot(page, f"admin-{name}-{tag}")
        # The page itself never scrolls sideways; wide tables scroll in their own box.
        assert page_width(page) <= viewport["width"], (name, page_width(page))
        assert_no_serious_axe_violations(page)


def test_the_admin_index_is_the_sale_day(browser, asgi_server):
    page = logged_in_page(browser, asgi_server, StaffFactory(), viewport=WIDE)
    page.goto(asgi_server.url + "/admin/")
    shot(page, "admin-index-1366")
    captions = page.locator("#content-main .module caption").all_inner_texts()
    assert captions[0].strip().lower() == "sale day"
    assert captions[-1].strip().lower().startswith("plumbing")
    first = page.locator("#content-main .module").first
    for model in ["Flights", "Events", "Bookings", "Refunds", "Waiting rooms"]:
        expect(first.get_by_role("link", name=model, exact=True)).to_be_visible()
    plumbing = page.locator("#content-main .module").last
    for model in ["Periodic tasks", "Access attempts", "Outbox events"]:
        expect(plumbing.get_by_role("link", name=model, exact=True)).to_be_visible()
    assert_no_serious_axe_violations(page)
