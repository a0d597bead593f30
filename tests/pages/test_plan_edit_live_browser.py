"""A customer's open seat picker follows a plan edit (issue 29, item 5) in headless Chromium,
at desktop and phone width: with no seat ticked the page reloads onto the new plan (the seat
drawn anew is there, a re-flagged one says so); with seats ticked it keeps the customer's
choice and says the plan changed.  The control: a seat change alone (a hold) updates the
plan in place without a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bookings.customer_holds import hold_seats
from events.plan_drawn import venue_drawing
from events.venues import save_drawn_plan
from tests.api.test_venue_plan_api import on_sale
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.test_browser import logged_in_page, off_loop

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


def open_picker(browser, server, event, viewport):
    is_phone = viewport["width"] < 500
    page = logged_in_page(
        browser, server, UserFactory(), viewport=viewport, is_mobile=is_phone, has_touch=is_phone
    )
    page.set_default_timeout(20_000)
    page.goto(f"{server.url}/events/{event.pk}/")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.evaluate("window.__notReloaded = true")  # gone once the page reloads
    return page


def grow_and_flag(event):
    drawing = venue_drawing(venue=event.venue)
    seats = drawing["sections"][0]["seats"]
    seats[1]["accessible"] = True  # 1-1-2
    seats.append({"row": "3", "number": 1, "x": 1, "y": 3})  # 1-3-1, drawn anew
    off_loop(save_drawn_plan, venue=event.venue, drawing=drawing)  # Playwright owns this loop


@VIEWPORTS
def test_an_open_picker_reloads_onto_the_edited_plan(browser, asgi_server, viewport):
    event = on_sale()
    page = open_picker(browser, asgi_server, event, viewport)
    expect(page.locator("#seat-1-3-1")).to_have_count(0)
    grow_and_flag(event)
    expect(page.locator("#seat-1-3-1")).to_have_count(1)
    assert page.evaluate("window.__notReloaded === undefined")
    expect(page.locator("#seat-1-1-2")).to_have_attribute(
        "aria-label", "Stalls, row 1, seat 2, category A, €50.00, wheelchair accessible, free"
    )
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    assert_no_serious_axe_violations(page)


@VIEWPORTS
def test_with_seats_ticked_the_choice_stays_and_the_page_says_the_plan_changed(
    browser, asgi_server, viewport
):
    event = on_sale()
    page = open_picker(browser, asgi_server, event, viewport)
    page.locator("#seat-1-1-4").check()
    expect(page.locator("#seat-1-1-4")).to_be_checked()
    grow_and_flag(event)
    expect(page.locator("#live-state")).to_have_attribute("data-state", "stale")
    expect(page.locator("#live-state")).to_contain_text("seating plan changed")
    expect(page.locator("#seat-1-1-4")).to_be_checked()
    assert page.evaluate("window.__notReloaded === true")
    assert_no_serious_axe_violations(page)


def test_control_a_seat_change_alone_updates_in_place(browser, asgi_server):
    event = on_sale()
    page = open_picker(browser, asgi_server, event, {"width": 1366, "height": 900})
    buyer = UserFactory()
    off_loop(
        hold_seats, customer=buyer, sale_id=event.sale_id, fare_class="A", seat_numbers=["1-2-1"]
    )
    expect(page.locator("#seat-1-2-1")).to_have_attribute("data-status", "taken")
    assert page.evaluate("window.__notReloaded === true")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
