"""The pages in German, Russian and English, in headless Chromium: each page is in the
reader's language (no English string from the catalogue, nor from a list of the journey's
own, is left), passes axe, and is saved as a screenshot per language in test-artifacts/.

The whole journey (search to cancel, the waiting room, the event picker, the staff's pages)
runs once per language in tests/pages/test_whole_journey_axe.py with this module's checks
(`assert_in_language`, `JOURNEY_ENGLISH`); this module keeps the event pages' own run.

The browser asks for the language the way a customer's does (Accept-Language from its
locale)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from tests.events.factories import EventFactory, VenueFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(240),
]

LOCALE_DIR = Path(__file__).resolve().parents[2] / "locale"

# Words of the journey's pages that must never be left in English (besides the catalogue's).
JOURNEY_ENGLISH = [
    "Search flights",
    "My bookings",
    "Log out",
    "Find a flight",
    "Choose seats",
    "seats left",
    "Times are local",
    "local time",
    "Flight SK",
    "departs",
    "arrives",
    "Cabin, front to back",
    "Your choice",
    "Passenger names",
    "full name",
    "Hold these seats",
    "Your seats are held",
    "Pay within",
    "to keep them",
    "Give up this hold",
    "Passengers",
    "Total",
    "Card number",
    "Test cards",
    "Back to Seatkeeper",
    "Booking confirmed",
    "Your tickets",
    "Download boarding pass",
    "Cancel this booking",
    "If you cancel now",
    "Keep my booking",
    "Cancel booking",
    "Waitlists",
    "Leave waitlist",
    "in line",
    "party of",
    "Continue to payment",
    "No account yet?",
    "Skip to content",
    "Live updates",
    "Seat 1",
    "window",
    "aisle",
    "Row 1",
    "Username",
    "Password",
    "minutes",
    "seconds",
]


# Words of the event pages that must never be left in English (besides the catalogue's).
EVENT_ENGLISH = [
    "Events",
    "Find an event",
    "Any city",
    "Any category",
    "Category",
    "Search",
    "Coming up",
    "Times are local",
    "On sale",
    "From",
    "Concert",
    "All events",
    "Tickets go on sale",
    "Prices",
    "places",
    "Seating plan",
    "accessible",
    "restricted view",
    "Stage",
    "Row 1 seat 1",
    "The venue",
    "The stage is",
    "standing",
    "seats",
    "category",
]
# An English date ("Wed, Dec 30, 2026, 20:00" or "Wednesday, December 30, 2026"), which the
# other languages must not show (their day names can contain "Mon" or "Feb" as words).
ENGLISH_DATE = re.compile(
    r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*, (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
)


def catalogue_english(language: str) -> list[str]:
    """The English msgids whose translation differs and that cannot be mistaken for a name,
    a code or part of a word: several words, or one long word; placeholders cut them."""
    found: set[str] = set()
    for po in (LOCALE_DIR / language / "LC_MESSAGES").glob("*.po"):
        with po.open("rb") as handle:
            catalog = read_po(handle, locale=language)
        for message in catalog:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if not message.id or ids[0] in strings:
                continue
            for msgid in ids:
                for part in _fragments(msgid):
                    found.add(part)
    return sorted(found)


def _fragments(msgid: str) -> list[str]:
    text = re.sub(r"<[^>]+>", "\x00", msgid)
    parts = re.split(r"%\(\w+\)[sdr]|%%|\x00|\{id\}", text)
    return [
        p.strip(" .,:;()·→-")
        for p in parts
        if len(p.strip(" .,:;()·→-")) >= 12 and " " in p.strip(" .,:;()·→-")
    ]


PAGE_TEXT = """() => {
  const copy = document.documentElement.cloneNode(true);
  copy.querySelectorAll("script, style, code, #language-select").forEach((e) => e.remove());
  const attrs = [];
  const named = "[aria-label], [title], [alt], [placeholder], input[type=submit]";
  copy.querySelectorAll(named).forEach((e) => {
    for (const name of ["aria-label", "title", "alt", "placeholder", "value"]) {
      const wanted = name !== "value" || e.type === "submit";
      if (e.hasAttribute(name) && wanted) attrs.push(e.getAttribute(name));
    }
  });
  return [document.title, copy.querySelector("body").textContent, ...attrs].join("\\n");
}"""


def assert_in_language(page, language: str, english: list[str], name: str) -> None:
    expect(page.locator("html")).to_have_attribute("lang", language)
    text = " ".join(page.evaluate(PAGE_TEXT).split())
    if language != "en":
        left = [
            (s, text[max(0, text.find(s) - 60) : text.find(s) + 60]) for s in english if s in text
        ]
        assert not left, f"{name} ({language}) still says in English: {left}"
    assert_no_serious_axe_violations(page)
    shot(page, f"journey-{language}-{name}")


def session_cookie(user, server) -> dict:
    client = Client()
    client.force_login(user)
    return {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": server.url}


def assert_dates_in_language(page, language: str) -> None:
    text = " ".join(page.locator("time, .event-sale, .event-detail .status").all_inner_texts())
    assert bool(ENGLISH_DATE.search(text)) == (language == "en"), text


@pytest.mark.parametrize("language", ["de", "ru", "en"])
def test_the_event_pages_in_each_language(browser, asgi_server, language):
    """The events list and an event's page (prices, plan, sections) in the browser's language:
    no English string left, money and dates written the reader's way, axe clean."""
    venue = VenueFactory(name="Philharmonie", city="Berlin")
    on_sale = EventFactory(name="Symphonie", venue=venue)
    EventFactory(name="Nachtkonzert", venue=venue, on_sale_at=timezone.now() + timedelta(days=2))
    english = sorted(
        set(catalogue_english(language) if language != "en" else []) | set(EVENT_ENGLISH)
    )
    locale = {"de": "de-DE", "ru": "ru-RU", "en": "en-US"}[language]
    context = browser.new_context(locale=locale, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)

    page.goto(f"{asgi_server.url}/events/")
    expect(page.locator(".event-name")).to_have_count(2)
    assert_in_language(page, language, english, "events")
    assert_dates_in_language(page, language)
    price = {"de": "30,00\xa0€", "ru": "30,00\xa0€", "en": "€30.00"}[language]
    expect(page.locator(f"[data-event='{on_sale.pk}'] .price")).to_have_text(price)

    # The page of the event on sale: prices, plan drawing, sections and the seat picker.
    page.click(f"[data-event='{on_sale.pk}'] .event-name a")
    expect(page.locator("h1")).to_have_text("Symphonie")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    assert_in_language(page, language, english, "event-detail")
    assert_dates_in_language(page, language)
    left = {"de": "noch 12", "ru": "осталось 12", "en": "12 left"}[language]
    expect(page.locator(".price-categories [data-category='A'] .left")).to_have_text(left)

    # One seat picked: the script's selection line and sticky bar.
    seat = page.locator(".seat-input:not([disabled])").first.get_attribute("id")
    page.click(f"#{seat}")
    category = {"de": "Kategorie", "ru": "категория", "en": "category"}[language]
    expect(page.locator("#selection")).to_contain_text(category)
    assert_in_language(page, language, english, "event-picker")
    context.close()
