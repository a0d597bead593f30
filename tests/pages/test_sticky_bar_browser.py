"""Issue 31 item 6 in headless Chromium at 390x844: when "Hold these seats" finds a name
missing, the browser scrolls to the field; the phone's sticky bar must not cover it (the field
was at 800 px, the bar's top at 782 px of 844), so the validation bubble points at something
visible.  The event picker and the flight picker; the desktop layout has no fixed bar."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.events.factories import EventFactory
from tests.factories import FlightFactory, UserFactory
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, open_picker

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(120),
]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}

VISIBLE_ABOVE_THE_BAR = """field => {
    const f = field.getBoundingClientRect();
    const bar = document.getElementById('sticky-bar').getBoundingClientRect();
    const fixed = getComputedStyle(document.getElementById('sticky-bar')).position === 'fixed';
    const bottom = fixed ? bar.top : window.innerHeight;
    return {top: f.top, bottom: f.bottom, limit: bottom,
            visible: f.top >= 0 && f.bottom <= bottom && f.height > 0,
            invalid: field.matches(':invalid'), focused: document.activeElement === field};
}"""


def check_field_shown(page, selector, name):
    field = page.locator(selector)
    # Park the page where the field sits just under the bar, as in the report.
    page.evaluate(
        """sel => { const f = document.querySelector(sel);
                    const y = f.getBoundingClientRect().top + window.scrollY;
                    window.scrollTo(0, Math.max(0, y - window.innerHeight + 40)); }""",
        selector,
    )
    page.click("#hold-button")
    page.wait_for_timeout(300)  # the browser's own scroll to the invalid field
    where = field.evaluate(VISIBLE_ABOVE_THE_BAR)
    assert where["invalid"] and where["focused"], where
    assert where["visible"], f"{selector} hidden behind the sticky bar: {where}"
    shot(page, name)


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone-390", "desktop-1366"])
def test_a_missing_ticket_name_scrolls_into_view_above_the_bar(browser, asgi_server, viewport):
    event = EventFactory(name="Sticky")
    page = logged_in_page(browser, asgi_server, UserFactory(), viewport=viewport)
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.locator("#seat-1-1-1").click()
    expect(page.locator("#seat-1-1-1")).to_be_checked()
    check_field_shown(page, "#ticket-name", f"31-missing-name-event-{viewport['width']}")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone-390", "desktop-1366"])
def test_a_missing_passenger_name_scrolls_into_view_above_the_bar(browser, asgi_server, viewport):
    flight = FlightFactory(code="SK631")
    page = logged_in_page(browser, asgi_server, UserFactory(), viewport=viewport)
    open_picker(page, asgi_server, flight, passengers=1)
    page.click("#seat-4A")
    check_field_shown(page, "#name-1", f"31-missing-name-flight-{viewport['width']}")
