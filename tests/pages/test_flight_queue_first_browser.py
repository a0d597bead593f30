"""Issue 31, item 8, in Chromium at both widths: a flight behind a waiting room shows the
queue before anything can be picked or typed; once let in, the picker shows the time left of
the shopper's turn, counting down as a hold does."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from waitroom.gate import cookie_name
from waitroom.staff import open_waiting_room
from waitroom.tokens import issue_token

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 900}, {"width": 390, "height": 844}], ids=["1366", "390"]
)
def test_a_protected_flight_shows_the_queue_first_then_the_turn_left(
    browser, asgi_server, flight, viewport
):
    room = open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    shopper = UserFactory()
    page = logged_in_page(browser, asgi_server, shopper, viewport=viewport)
    picker = f"{asgi_server.url}/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=2"
    page.goto(picker)
    expect(page.locator("#go-to-queue")).to_have_attribute("href", f"/waiting-room/{room.pk}/")
    assert page.locator("#seat-form").count() == 0  # nothing to pick or type before the queue
    assert page.locator("input[name=names]").count() == 0
    shot(page, f"flight-queue-first-{viewport['width']}")
    assert_no_serious_axe_violations(page)

    token = issue_token(
        room_id=room.pk,
        customer_id=shopper.pk,
        expires_at=timezone.now() + timedelta(minutes=5),
    )
    page.context.add_cookies(
        [{"name": cookie_name(room.pk), "value": token, "url": asgi_server.url}]
    )
    page.goto(picker)
    expect(page.locator("#seat-form")).to_be_visible()
    left = page.locator("#turn-left")
    expect(left).to_have_text(re.compile(r"^0[45]:\d\d$"))
    first = left.inner_text()
    expect(left).not_to_have_text(first, timeout=3000)  # it counts down
    shot(page, f"flight-turn-left-{viewport['width']}")
    assert_no_serious_axe_violations(page)
