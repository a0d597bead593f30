"""Issue 31, item 11 (polish): the exit row's mark fits its row in every language ("AUSGANG"
overflowed the aisle, drawn across the seats), at both widths, with axe clean."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OVERLAPS = """() => {
  const hit = (a, b) =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const out = [];
  for (const row of document.querySelectorAll('.seat-row.exit-row')) {
    const mark = row.querySelector('.exit-mark').getBoundingClientRect();
    const box = row.getBoundingClientRect();
    if (mark.top < box.top - 0.5 || mark.bottom > box.bottom + 0.5)
      out.push(row.dataset.row + ' leaves its row');
    for (const seat of document.querySelectorAll('.seat')) {
      if (hit(mark, seat.getBoundingClientRect())) out.push(row.dataset.row + ' covers a seat');
    }
  }
  return out;
}"""


@pytest.mark.parametrize("language", ["de", "ru", "en"])
@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 900}, {"width": 390, "height": 844}], ids=["1366", "390"]
)
def test_the_exit_mark_stays_in_its_row(browser, asgi_server, flight, viewport, language):
    page = logged_in_page(
        browser,
        asgi_server,
        UserFactory(),
        viewport=viewport,
        extra_http_headers={"Accept-Language": language},
    )
    page.goto(f"{asgi_server.url}/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=1")
    expect(page.locator(".seat-row.exit-row").first).to_be_visible()
    assert page.evaluate(OVERLAPS) == []
    page.locator(".seat-row.exit-row").first.scroll_into_view_if_needed()
    shot(page, f"exit-row-{language}-{viewport['width']}")
    assert_no_serious_axe_violations(page)
