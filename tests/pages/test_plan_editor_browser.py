"""Issue 29, item 5, in Chromium: staff draw a venue's seat map in the admin at phone and
desktop width: drag two rows, open an aisle, flag a seat, save; the plan is what they drew,
and axe finds nothing serious on the page.  Then the same editor on a plan on sale refuses
to drop a held seat and says why."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bookings.customer_holds import hold_seats
from events.models import VenueSeat
from tests.events.factories import VenueFactory
from tests.events.test_plan_editor import on_sale
from tests.factories import StaffFactory, UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


def drag_row(page, first: int, last: int, line: int) -> None:
    """Press on cell (first, line), move to (last, line), let go."""
    canvas = page.locator("#pe-canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    cols = int(canvas.get_attribute("data-cols"))
    lines = int(canvas.get_attribute("data-lines"))

    def centre(x, y):
        return box["x"] + (x - 0.5) * box["width"] / cols, box["y"] + (y - 0.5) * box[
            "height"
        ] / lines

    page.mouse.move(*centre(first, line))
    page.mouse.down()
    page.mouse.move(*centre((first + last) / 2, line), steps=3)
    page.mouse.move(*centre(last, line), steps=3)
    page.mouse.up()


def seat(page, row: str, number: int):
    return page.locator(f'#pe-canvas .pe-seat[data-row="{row}"][data-number="{number}"]')


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366", "390"])
def test_staff_draw_rows_open_an_aisle_and_save(browser, asgi_server, viewport):
    venue = VenueFactory(plan=None)
    page = logged_in_page(browser, asgi_server, StaffFactory(), viewport=viewport)
    page.goto(f"{asgi_server.url}/admin/events/venue/{venue.pk}/plan/draw/")
    page.get_by_label("New section name").fill("Stalls")
    page.get_by_role("button", name="Add section").click()
    drag_row(page, 2, 7, 2)
    expect(page.locator("#pe-status")).to_have_text("Row 1: 6 seat(s) added.")
    drag_row(page, 2, 7, 3)
    expect(page.locator("#pe-canvas .pe-seat")).to_have_count(12)
    page.get_by_label("Aisle after a seat (on/off)").check()
    seat(page, "1", 3).click()
    expect(page.locator("#pe-status")).to_have_text("Aisle opened after seat 3.")
    # The keyboard works the seats too: focus one, press Enter.
    page.get_by_label("Accessible (on/off)").check()
    seat(page, "2", 1).focus()
    page.keyboard.press("Enter")
    expect(seat(page, "2", 1)).to_have_attribute("aria-label", "Row 2, seat 1, accessible")
    shot(page, f"plan-editor-{viewport['width']}")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]
    assert_no_serious_axe_violations(page)
    page.get_by_role("button", name="Save plan").click()
    expect(page.locator(".messagelist")).to_contain_text("1 section(s), 12 seat(s)")
    seats = {
        (s.row, s.number): (s.x, s.y, s.accessible)
        for s in VenueSeat.objects.filter(section__venue=venue)
    }
    assert [seats[("1", n)][0] for n in range(1, 7)] == [2, 3, 4, 6, 7, 8]  # the aisle
    assert seats[("2", 1)] == (2, 3, True) and seats[("1", 1)] == (2, 2, False)


def test_the_editor_refuses_to_drop_a_held_seat_and_keeps_the_drawing(browser, asgi_server):
    event = off_loop(on_sale)
    off_loop(
        hold_seats,
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-4"],
    )
    page = logged_in_page(browser, asgi_server, StaffFactory(), viewport=WIDE)
    page.goto(f"{asgi_server.url}/admin/events/venue/{event.venue_id}/plan/draw/")
    page.get_by_label("Remove a seat").check()
    seat(page, "1", 4).click()
    expect(seat(page, "1", 4)).to_have_count(0)
    page.get_by_role("button", name="Save plan").click()
    expect(page.get_by_role("alert")).to_contain_text(
        "Stalls row 1 seat 4 is held for " + event.name
    )
    expect(seat(page, "1", 4)).to_have_count(0)  # the drawing comes back as drawn
    assert_no_serious_axe_violations(page)
    assert VenueSeat.objects.filter(section__venue=event.venue, row="1", number=4).exists()


def test_staff_curve_and_angle_a_section_and_score_a_seat(browser, asgi_server):
    venue = VenueFactory(plan=None)
    page = logged_in_page(browser, asgi_server, StaffFactory(), viewport=WIDE)
    page.goto(f"{asgi_server.url}/admin/events/venue/{venue.pk}/plan/draw/")
    page.get_by_label("New section name").fill("Circle")
    page.get_by_role("button", name="Add section").click()
    # A row by keyboard alone: five seats from column 1 on line 1.
    page.get_by_label("First column").fill("1")
    page.get_by_label("Line", exact=True).fill("1")
    page.get_by_label("Seats", exact=True).fill("5")
    page.get_by_role("button", name="Add row").click()
    page.get_by_label("Curve (lines the middle sits back)").fill("2")
    page.get_by_role("button", name="Apply to the section").click()
    expect(page.locator("#pe-status")).to_have_text("Section reshaped.")
    page.get_by_label("Curve (lines the middle sits back)").fill("0")
    page.get_by_label("Angle (lines per 10 seats; negative tilts the other way)").fill("10")
    page.get_by_role("button", name="Apply to the section").click()
    page.get_by_label("Set the quality score").check()
    page.get_by_label("Quality score (lower is better; empty: distance from the stage)").fill("0.5")
    seat(page, "1", 3).click()
    expect(seat(page, "1", 3)).to_have_attribute("aria-label", "Row 1, seat 3, quality 0.5")
    page.get_by_role("button", name="Save plan").click()
    expect(page.locator(".messagelist")).to_contain_text("1 section(s), 5 seat(s)")
    seats = {
        s.number: (s.x, s.y, s.quality) for s in VenueSeat.objects.filter(section__venue=venue)
    }
    # The curve sets the middle back (ends 0, then 1, middle 2 lines), the angle tilts by one
    # line a seat: y = 1 + curve + (x - 1).
    assert seats == {
        1: (1, 1, None),
        2: (2, 3, None),
        3: (3, 5, 0.5),
        4: (4, 5, None),
        5: (5, 5, None),
    }
