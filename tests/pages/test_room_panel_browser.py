"""Issue 30, item 6, in Chromium: staff pause and resume a waiting room from its live panel
(each change confirmed, then audited), and the figures move without a reload when the room
changes behind the page's back.  The panel passes axe."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.factories import StaffFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from tests.waitroom.room_helpers import protect, small_flight
from waitroom import staff
from waitroom.models import RoomChange, RoomChangeKind

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_pause_and_resume_from_the_live_panel(browser, asgi_server):
    room = protect(small_flight(), opens_at=timezone.now() - timedelta(minutes=1), rate=60)
    boss = StaffFactory()
    page = logged_in_page(browser, asgi_server, boss, viewport={"width": 1366, "height": 900})
    page.goto(f"{asgi_server.url}/admin/waitroom/waitingroom/{room.pk}/panel/")
    expect(page.locator("#fig-paused")).to_have_attribute("data-paused", "false")
    assert_no_serious_axe_violations(page)

    page.click("#pause-button")
    expect(page.locator("#confirm-question")).to_be_visible()  # asked first
    assert_no_serious_axe_violations(page)
    page.click("#confirm-yes")
    expect(page.locator("#fig-paused")).to_have_attribute("data-paused", "true")
    expect(page.locator("#resume-button")).to_be_visible()
    shot(page, "admin-room-panel-paused")

    page.click("#resume-button")
    page.click("#confirm-yes")
    expect(page.locator("#fig-paused")).to_have_attribute("data-paused", "false")
    assert list(RoomChange.objects.values_list("kind", "changed_by")) == [
        ("RESUME", boss.pk),
        ("PAUSE", boss.pk),
    ]
    expect(page.locator("#room-changes tbody tr")).to_have_count(2)

    # Live: another staff member changes the rate; this page shows it without a reload.
    staff.do_change_admission(
        room_id=room.pk, by=StaffFactory(), kind=RoomChangeKind.RATE, rates={"admit_per_minute": 42}
    )
    expect(page.locator("#fig-rate")).to_have_text("42", timeout=10_000)
