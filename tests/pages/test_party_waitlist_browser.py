"""Issue 29, item 2, in Chromium at phone and desktop width: on a sold-out event a party of
four joins the waitlist with the sections it accepts and a price ceiling; freed seats either
side of the aisle are not offered; four side by side are, and the offer shows on "My
bookings".  axe finds nothing serious on the event page or on "My bookings"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bookings import adjacency
from bookings.models import Seat, WaitlistEntry, WaitlistStatus
from tests.bookings.test_best_available import hall_event
from tests.bookings.test_party_waitlist import free, sell_out
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366", "390"])
def test_a_party_of_four_joins_and_is_offered_four_side_by_side(browser, asgi_server, viewport):
    event = off_loop(hall_event, rule=False)  # rows of 2 x 4, the aisle after seat 4
    holds = off_loop(sell_out, event.sale_id, "A")
    customer = UserFactory()
    page = logged_in_page(browser, asgi_server, customer, viewport=viewport)
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    page.get_by_label("Party size").fill("4")
    page.get_by_label("Sections you accept (comma separated, empty: any)").fill("Stalls")
    page.get_by_label("Most you pay per seat (empty: any)").fill("60")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    assert_no_serious_axe_violations(page)
    page.locator("#waitlist-A").click()
    expect(page.locator(".waitlist-entry .position")).to_have_text("number 1")
    entry = WaitlistEntry.objects.get(customer=customer)
    assert (entry.party_size, entry.sections, entry.max_seat_price) == (4, ["Stalls"], 60)
    assert_no_serious_axe_violations(page)

    off_loop(free, holds, "1-1-3", "1-1-4", "1-1-5", "1-1-6")  # four, split by the aisle
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.WAITING
    off_loop(free, holds, "1-2-1", "1-2-2", "1-2-3", "1-2-4")
    entry.refresh_from_db()
    assert entry.status == WaitlistStatus.OFFERED
    block = list(Seat.objects.filter(booking_id=entry.offer_id).order_by("seat_no"))
    assert [s.seat_no for s in block] == ["1-2-1", "1-2-2", "1-2-3", "1-2-4"]
    assert adjacency.is_block(block)
    # No reload by the test: joining landed on "My bookings", whose waitlist poll
    # (static/js/booking-progress.js) reloads the page itself once the offer is made.  A
    # reload of our own raced that one, and the loser was aborted (net::ERR_ABORTED).
    expect(page.locator(".waitlist-entry .offer")).to_be_visible(timeout=10000)
    expect(page.get_by_role("link", name="Pay for your offered seats")).to_be_visible()
    shot(page, f"29-party-waitlist-offer-{viewport['width']}")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    assert_no_serious_axe_violations(page)
