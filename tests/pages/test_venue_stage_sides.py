"""The venue seat picker draws the plan the way the seats face the stage, on every side: the
stage is on its side of the seats, row 1 and the first section nearest it, and the arrow keys
move along a row and away from the stage as the rows are drawn (rows turn into columns when
the stage is on the left or right).  Headless Chromium on the real ASGI server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.events.factories import SMALL_HALL, EventFactory, VenueFactory
from tests.factories import UserFactory
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(120),
]

FOCUSED_SEAT = "() => document.activeElement && document.activeElement.dataset.seat || null"

# side: (key along a row to the next seat, key to the next row away from the stage,
#        axis away from the stage, +1/-1 as seen on the screen)
SIDES = {
    "top": ("ArrowRight", "ArrowDown", "y", 1),
    "bottom": ("ArrowRight", "ArrowUp", "y", -1),
    "left": ("ArrowDown", "ArrowRight", "x", 1),
    "right": ("ArrowDown", "ArrowLeft", "x", -1),
}


def centre(page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box, selector
    return {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2, **box}


@pytest.mark.parametrize("side", list(SIDES))
def test_the_plan_faces_the_stage_and_the_arrow_keys_follow_the_drawing(browser, asgi_server, side):
    along_key, away_key, axis, sign = SIDES[side]
    venue = VenueFactory(plan=SMALL_HALL.replace("stage: top", f"stage: {side}"))
    event = EventFactory(name=f"Stage {side}", venue=venue)
    page = logged_in_page(
        browser, asgi_server, UserFactory(), viewport={"width": 1280, "height": 900}
    )
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")

    stage = page.locator(".pick-plan .stage").bounding_box()
    first, second = centre(page, "#seat-1-1-1"), centre(page, "#seat-1-1-2")
    next_row = centre(page, "#seat-1-2-1")
    balcony = centre(page, "#seat-2-A-1")

    def away(seat: dict[str, float]) -> float:
        """How far from the stage `seat` is drawn."""
        return (seat[axis] - (stage["y"] if axis == "y" else stage["x"])) * sign

    # The stage is entirely on its side of every seat.
    edge = {
        "top": stage["y"] + stage["height"],
        "bottom": stage["y"],
        "left": stage["x"] + stage["width"],
        "right": stage["x"],
    }[side]
    for seat in (first, second, next_row, balcony):
        if side == "top":
            assert seat["y"] >= edge
        elif side == "bottom":
            assert seat["y"] + seat["height"] <= edge
        elif side == "left":
            assert seat["x"] >= edge
        else:
            assert seat["x"] + seat["width"] <= edge
    # Row 1 is nearest the stage, then row 2; the first section before the second.
    assert away(first) < away(next_row) < away(balcony)
    # A row runs across the seats' line of sight: its seats are equally far from the stage.
    assert abs(away(first) - away(second)) < 2

    page.locator("#seat-1-1-1").focus()
    page.keyboard.press(along_key)
    assert page.evaluate(FOCUSED_SEAT) == "1-1-2"
    page.keyboard.press(away_key)
    assert page.evaluate(FOCUSED_SEAT) == "1-2-2"
    page.keyboard.press("Space")
    expect(page.locator("#seat-1-2-2")).to_be_checked()
    shot(page, f"24-event-stage-{side}")


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_side_stage_plan_fits_a_phone_without_sideways_scrolling(browser, asgi_server, side):
    venue = VenueFactory(plan=SMALL_HALL.replace("stage: top", f"stage: {side}"))
    event = EventFactory(name=f"Phone stage {side}", venue=venue)
    page = logged_in_page(
        browser,
        asgi_server,
        UserFactory(),
        viewport={"width": 375, "height": 740},
        is_mobile=True,
        has_touch=True,
    )
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0  # the page itself never scrolls sideways
    # The plan scrolls sideways on its own; the seat farthest from the stage can be tapped.
    seat = page.locator("#seat-2-B-5")
    seat.evaluate("el => el.scrollIntoView({block: 'center', inline: 'center'})")
    seat.tap()
    expect(seat).to_be_checked()
    seat = page.locator("#seat-1-4-3")
    seat.evaluate("el => el.scrollIntoView({block: 'center', inline: 'center'})")
    seat.tap()
    expect(page.locator("#seat-1-4-3")).to_be_checked()
