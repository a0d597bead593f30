"""Issue 31 items 3, 4 and 5 in headless Chromium, at 1366x900 and 390x844: the customers' venue
plan is one drawing before and during the sale (the stage at the bottom draws row 1 next to it
on both), fits the width with every seat of the widest row in view (the wheelchair places
21-24 of row 12 were cut off), zooms with buttons and a pinch, jumps to a section from its
overview, and marks a chosen seat with a tick whose contrast with every category colour is at
least 3:1 (the blue "Your choice" vanished on blue category B)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from events.colours import contrast_ratio
from events.services import AssignmentSpec, PriceCategorySpec
from tests.events.factories import EventFactory, VenueFactory
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]

DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop-1366", "phone-390"])

# The demo concert hall's stalls (24 seats a row, wheelchair places at both ends of row 12),
# with the stage at the bottom as in the demo arena.
WIDE_HALL = """
stage: bottom
Section Stalls: rows 1-12 x seats 1-24; aisle after 12; accessible: row 12 seats 1-4, 21-24
Section Balcony: rows A-C x seats 1-20; restricted: row C seats 1-2
"""
PRICES = (
    PriceCategorySpec("A", "Front stalls", Decimal("89.00"), "EUR", "#b91c1c"),
    PriceCategorySpec("B", "Rear stalls", Decimal("59.00"), "EUR", "#1d4ed8"),
    PriceCategorySpec("C", "Balcony", Decimal("39.00"), "EUR", "#7c3aed"),
)
RULES = (
    AssignmentSpec("A", "Stalls", "1", "6"),
    AssignmentSpec("B", "Stalls", "7", "12"),
    AssignmentSpec("C", "Balcony"),
)
# One seat of each category, the restricted-view one included.
SEAT_OF = {"A": "1-1-5", "B": "1-9-7", "C": "2-C-1"}


def wide_event(*, on_sale: bool = True, venue=None):
    return EventFactory(
        name="Wide hall",
        venue=venue or VenueFactory(plan=WIDE_HALL),
        prices=PRICES,
        assignments=RULES,
        on_sale_at=timezone.now() + (timedelta(days=-1) if on_sale else timedelta(days=2)),
    )


def open_plan(browser, server, event, viewport, *, live=True):
    is_phone = viewport["width"] < 500
    page = logged_in_page(
        browser, server, UserFactory(), viewport=viewport, is_mobile=is_phone, has_touch=is_phone
    )
    page.goto(f"{server.url}/events/{event.pk}/")
    if live:
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    expect(page.locator("[data-seat-plan]")).to_have_attribute("data-ready", "true")
    return page


def box(page, selector):
    found = page.locator(selector).bounding_box()
    assert found, selector
    return found


def inside(inner, outer, slack=1.0) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


def zoom(page) -> float:
    return float(page.locator("[data-seat-plan]").get_attribute("data-zoom"))


# --- item 4: the plan fits the width, zooms, pans and has an overview -------------------------


@VIEWPORTS
def test_the_plan_fits_the_width_with_every_seat_of_the_widest_row(browser, asgi_server, viewport):
    event = wide_event()
    page = open_plan(browser, asgi_server, event, viewport)
    frame = box(page, ".plan-viewport")
    assert frame["x"] >= 0 and frame["x"] + frame["width"] <= viewport["width"]
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0  # the page never scrolls sideways
    # Both ends of the front row and of row 12, where the wheelchair places are.
    for seat in ("1-1-1", "1-1-24", "1-12-1", "1-12-21", "1-12-24"):
        assert inside(box(page, f"label[for=seat-{seat}]"), frame), seat
    shot(page, f"31-plan-fitted-{viewport['width']}")

    # Zoom in: seats grow and the plan pans (scrolls) inside its box; "Fit" goes back.
    fitted, before = zoom(page), box(page, "label[for=seat-1-12-24]")["width"]
    page.click("[data-zoom=in]")
    page.click("[data-zoom=in]")
    assert zoom(page) > fitted
    assert box(page, "label[for=seat-1-12-24]")["width"] > before * 1.4
    scrollable = page.evaluate(
        "() => { const v = document.querySelector('.plan-viewport');"
        " return v.scrollWidth > v.clientWidth; }"
    )
    assert scrollable or viewport["width"] > 1000
    page.click("[data-zoom=fit]")
    assert zoom(page) == pytest.approx(fitted, abs=0.01)
    assert inside(box(page, "label[for=seat-1-12-24]"), box(page, ".plan-viewport"))

    # The overview names every section and brings the one asked for into view.
    overview = page.locator(".plan-overview .plan-jump")
    expect(overview).to_have_text(["Stalls", "Balcony"])
    page.click("[data-zoom=in]")
    page.click("[data-zoom=in]")
    page.click("[data-zoom=in]")
    overview.nth(1).click()
    expect(overview.nth(1)).to_have_attribute("aria-current", "true")
    assert inside(box(page, "label[for=seat-2-A-1]"), box(page, ".plan-viewport"))
    assert_no_serious_axe_violations(page)
    shot(page, f"31-plan-overview-balcony-{viewport['width']}")


def test_a_pinch_zooms_the_plan_on_a_phone(browser, asgi_server):
    event = wide_event()
    page = open_plan(browser, asgi_server, event, PHONE)
    fitted = zoom(page)
    page.locator(".plan-viewport").evaluate("v => v.scrollIntoView({block: 'start'})")
    frame = box(page, ".plan-viewport")
    cx, cy = frame["x"] + frame["width"] / 2, frame["y"] + min(frame["height"], 300) / 2
    cdp = page.context.new_cdp_session(page)

    def touch(kind, spread):
        points = (
            []
            if kind == "touchEnd"
            else [
                {"x": cx - spread, "y": cy, "id": 1},
                {"x": cx + spread, "y": cy, "id": 2},
            ]
        )
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", 20)
    for spread in range(25, 100, 5):
        touch("touchMove", spread)
    touch("touchEnd", 0)
    assert zoom(page) > fitted * 2
    shot(page, "31-plan-pinched-390")


# --- item 5: one drawing before and during the sale, the stage at the bottom -----------------


@VIEWPORTS
def test_before_and_during_the_sale_the_plan_is_drawn_the_same_way_up(
    browser, asgi_server, viewport
):
    venue = VenueFactory(plan=WIDE_HALL)
    later, live = wide_event(on_sale=False, venue=venue), wide_event(venue=venue)

    def layout(page, seat):
        stage = box(page, ".seat-plan .stage")
        y = {s: box(page, seat(s))["y"] for s in ("1-1-1", "1-12-1", "2-A-1")}
        return stage, y

    before = open_plan(browser, asgi_server, later, viewport, live=False)
    stage, drawn = layout(before, lambda s: f".seat-face[data-seat='{s}']")
    shot(before, f"31-plan-before-sale-{viewport['width']}")
    during = open_plan(browser, asgi_server, live, viewport)
    live_stage, live_drawn = layout(during, lambda s: f"label[for=seat-{s}]")
    for seats, stage_box in ((drawn, stage), (live_drawn, live_stage)):
        # The stage at the bottom: row 1 next to it, then row 12, then the balcony.
        assert seats["2-A-1"] < seats["1-12-1"] < seats["1-1-1"] < stage_box["y"], seats
    assert before.locator(".plan-preview input").count() == 0  # a picture, not a form
    assert_no_serious_axe_violations(before)


# --- item 3: a chosen seat is marked by a tick that contrasts with its category ---------------

MARK = """label => {
    const seat = getComputedStyle(label), mark = getComputedStyle(label, '::after');
    return {content: mark.content, mark: mark.color, seat: seat.backgroundColor,
            ring: seat.boxShadow};
}"""


def hex_of(rgb: str) -> str:
    numbers = rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]
    return "#" + "".join(f"{int(float(n)):02x}" for n in numbers)


@VIEWPORTS
def test_a_chosen_seat_has_a_tick_at_3_to_1_on_every_category_colour(
    browser, asgi_server, viewport
):
    event = wide_event()
    page = open_plan(browser, asgi_server, event, viewport)
    for code, seat in SEAT_OF.items():
        label = page.locator(f"label[for=seat-{seat}]")
        free = label.evaluate(MARK)
        assert free["content"] in ("none", "normal", '""')  # no tick before it is chosen
        label.evaluate("l => l.scrollIntoView({block: 'center'})")
        page.locator(f"#seat-{seat}").click()
        expect(page.locator(f"#seat-{seat}")).to_be_checked()
        chosen = label.evaluate(MARK)
        assert chosen["content"] == '"✓"', code  # a shape, not only a colour
        ratio = contrast_ratio(hex_of(chosen["mark"]), hex_of(chosen["seat"]))
        assert ratio >= 3, (code, chosen, ratio)
        assert "inset" in chosen["ring"]  # and a ring in the same ink
        if code == "B":
            shot(page, f"31-chosen-seat-blue-{viewport['width']}")
            assert_no_serious_axe_violations(page)
        page.locator(f"#seat-{seat}").click()  # unpick: one category per booking
        expect(page.locator(f"#seat-{seat}")).not_to_be_checked()
