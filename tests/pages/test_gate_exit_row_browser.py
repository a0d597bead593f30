"""The gate's exit-row refusal in Chromium, at 390x844 and 1366x900, in German: the agent
sees why the passenger is not boarded, ticks the conditions confirmed with them and boards
the same code; the page passes axe (issue 31, the gate's part of the exit-row rule)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from bookings.models import Passenger, Ticket, TicketStatus
from flights.models import Flight
from kernel.outbox import relay_outbox
from tests.bookings.confirming import hold_and_confirm
from tests.factories import StaffFactory, UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = pytest.mark.parametrize(
    "viewport",
    [{"width": 390, "height": 844}, {"width": 1366, "height": 900}],
    ids=["390", "1366"],
)


@VIEWPORTS
def test_the_agent_confirms_the_exit_row_conditions_and_boards_the_same_code(
    browser, asgi_server, flight, viewport
):
    Flight.objects.filter(pk=flight.pk).update(exit_rows=[12])
    booking = hold_and_confirm(UserFactory(), flight, seats=["12A"], names=["Ana Lima"])
    relay_outbox(now=timezone.now() + timedelta(hours=1))
    ticket = Ticket.objects.get(booking=booking)
    page = logged_in_page(
        browser, asgi_server, StaffFactory(), viewport=viewport, locale="de-DE",
        extra_http_headers={"Accept-Language": "de"},
    )  # fmt: skip
    page.goto(f"{asgi_server.url}/checkin/?flight={flight.pk}")
    page.fill("#code", ticket.code)
    page.locator("form[method=post]").last.get_by_role("button").click()

    verdict = page.locator("[data-outcome]")
    expect(verdict).to_have_attribute("data-outcome", "conditions_unconfirmed")
    expect(verdict).to_contain_text("Notausgangsreihe")
    box = page.get_by_label("Bedingungen mit dem Fluggast bestätigt")
    expect(box).to_be_visible()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= viewport["width"]
    assert_no_serious_axe_violations(page)
    shot(page, f"31-gate-exit-row-{viewport['width']}")
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.VALID

    box.check()
    page.get_by_role("button", name="Bestätigen und einsteigen lassen").click()

    expect(page.locator("[data-outcome]")).to_have_attribute("data-outcome", "valid")
    ticket.refresh_from_db()
    assert ticket.status == TicketStatus.USED
    assert Passenger.objects.get(pk=ticket.passenger_id).seat_conditions_confirmed_at
