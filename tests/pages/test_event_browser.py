"""The event pages in headless Chromium: search, the detail page with its plan drawing, on a
phone, with no serious axe violations."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.events.factories import EventFactory, VenueFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_find_an_event_by_city_and_read_it_on_a_phone(browser, asgi_server):
    EventFactory(name="Symphony", venue=VenueFactory(city="Berlin"))
    # On sale later: its page draws the plan (once on sale it is the seat picker, which
    # tests/pages/test_event_journey.py checks on a phone).
    EventFactory(
        name="Cup final",
        venue=VenueFactory(city="Munich"),
        category="SPORT",
        on_sale_at=timezone.now() + timedelta(days=1),
    )
    page = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True).new_page()
    page.goto(f"{asgi_server.url}/events/")
    assert_no_serious_axe_violations(page)
    page.select_option("#id_city", "Munich")
    page.click(".search-form button[type=submit]")
    expect(page.locator(".event-name")).to_have_text(["Cup final"])
    page.click("text=Cup final")
    expect(page.locator("h1")).to_have_text("Cup final")
    expect(page.locator(".plan-preview .seat-face")).to_have_count(24 + 10)
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert_no_serious_axe_violations(page)
    shot(page, "events-detail-phone")
