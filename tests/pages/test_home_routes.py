"""Issue 31, item 11 (polish): before any search the home page hints at the routes on sale
and their next dates, each a link to that day's results."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_the_home_page_lists_routes_with_their_next_date(client, flight):
    page = client.get(reverse("flights:search")).content.decode()
    hints = page.split('id="routes-on-sale"')[1].split("</section>")[0]
    assert "Sgn → Hanoi, next on" in hints
    link = html_lib.unescape(re.search(r'href="([^"]+)"', hints).group(1))
    results = client.get(link).content.decode()
    assert f'data-flight="{flight.code}"' in results  # the hint finds the flight


def test_no_hint_once_searched(client, flight):
    page = client.get(
        reverse("flights:search"),
        {"origin": "SGN", "destination": "HAN", "date": "2099-01-01", "passengers": 1},
    ).content.decode()
    assert 'id="routes-on-sale"' not in page
