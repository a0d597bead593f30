"""Issue 31, "Done when": the whole journey with axe at 0 serious and 0 critical in each of de,
ru and en.  tests/pages/test_languages_browser.py::test_the_journey_in_each_language walks
search, pick, hold, pay (the sandbox checkout), tickets and the cancel quote; this walks the
rest of the journey in the same three languages, one test per language: a flight behind a
waiting room (the queue first, then admitted, with the turn's time left), the event picker
zoomed in and back to fit, and the staff's sale-day pages (the admin index, flights, bookings,
refunds, waiting rooms and one flight's departure panel).  Screenshots in test-artifacts/."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from languages.services import set_preferred_language
from tests.factories import FlightFactory, StaffFactory, UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from tests.pages.test_seat_plan_browser import wide_event, zoom
from waitroom.gate import cookie_name
from waitroom.staff import open_waiting_room
from waitroom.tokens import issue_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(300),
]

DESKTOP = {"width": 1366, "height": 900}
LOCALES = {"de": "de-DE", "ru": "ru-RU", "en": "en-US"}
SALE_DAY = [
    "/admin/",
    "/admin/flights/flight/",
    "/admin/bookings/booking/",
    "/admin/payments/refund/",
    "/admin/waitroom/waitingroom/",
]


def reader(browser, server, user, language):
    set_preferred_language(user_id=user.pk, language=language)
    page = logged_in_page(browser, server, user, viewport=DESKTOP, locale=LOCALES[language])
    page.set_default_timeout(30_000)
    return page


def checked(page, language: str, name: str) -> None:
    expect(page.locator("html")).to_have_attribute("lang", language)
    assert_no_serious_axe_violations(page)
    shot(page, f"whole-journey-{language}-{name}")


@pytest.mark.parametrize("language", ["de", "ru", "en"])
def test_the_rest_of_the_journey_passes_axe_in_each_language(browser, asgi_server, language):
    base = asgi_server.url
    flight = FlightFactory(code="SK720")
    room = open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    shopper = UserFactory()
    page = reader(browser, asgi_server, shopper, language)

    # The waiting room: the picker sends the shopper to the queue first, the room's page.
    picker = f"{base}/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=1"
    page.goto(picker)
    expect(page.locator("#go-to-queue")).to_be_visible()
    checked(page, language, "queue-first")
    page.goto(f"{base}/waiting-room/{room.pk}/")
    checked(page, language, "waiting-room")
    # Admitted: the picker, with the turn's time left.
    token = issue_token(
        room_id=room.pk, customer_id=shopper.pk, expires_at=timezone.now() + timedelta(minutes=5)
    )
    page.context.add_cookies([{"name": cookie_name(room.pk), "value": token, "url": base}])
    page.goto(picker)
    expect(page.locator("#turn-left")).to_have_text(re.compile(r"^0[45]:\d\d$"))
    checked(page, language, "admitted-picker")

    # The event picker, zoomed in, then fitted again.
    event = wide_event()
    page.goto(f"{base}/events/{event.pk}/")
    expect(page.locator("[data-seat-plan]")).to_have_attribute("data-ready", "true")
    fitted = zoom(page)
    page.click("[data-zoom=in]")
    page.click("[data-zoom=in]")
    assert zoom(page) > fitted
    checked(page, language, "event-zoomed")
    page.click("[data-zoom=fit]")
    checked(page, language, "event-fitted")
    page.context.close()

    # The staff's sale-day pages, in the staff member's language.
    staff = reader(browser, asgi_server, StaffFactory(), language)
    for path in [*SALE_DAY, f"/admin/flights/flight/{flight.pk}/departure/"]:
        response = staff.goto(base + path)
        assert response.status == 200, path
        checked(staff, language, path.strip("/").replace("/", "-") or "admin")
    staff.context.close()
