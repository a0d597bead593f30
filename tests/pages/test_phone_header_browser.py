"""Issue 31, item 11 (polish): the site header on a phone is a compact band, not 160 px of
links, in every language, signed in or not; at 1366 px it stays one line. Axe clean."""

from __future__ import annotations

import pytest

from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# At most: the brand line and two short lines of links (44 px targets are not asked of text
# links in a header, WCAG 2.5.8's inline exception).
LIMITS = {390: 104, 1366: 64}


@pytest.mark.parametrize("language", ["en", "de", "ru"])
@pytest.mark.parametrize("width", [390, 1366])
def test_the_header_is_compact(browser, asgi_server, width, language):
    user = UserFactory(username="margarethe.k")
    page = logged_in_page(
        browser,
        asgi_server,
        user,
        viewport={"width": width, "height": 844 if width == 390 else 900},
        extra_http_headers={"Accept-Language": language},
    )
    page.goto(f"{asgi_server.url}/events/")
    height = page.evaluate("() => document.querySelector('.site-header').offsetHeight")
    shot(page, f"header-{language}-{width}")
    assert height <= LIMITS[width], height
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert_no_serious_axe_violations(page)
