"""The sold-out sentence is written once per language, catalogue and class, and the title
once per language, and then reused (bookings.errors._sold_out_text, _sold_out_title, issue
26): the same words as translating them afresh, in every language and catalogue, and no
translation for the next loser."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.utils import translation

from bookings import errors
from bookings.errors import BookingClassSoldOut, SoldOut
from events.catalogue import EventCatalogue
from flights.catalogue import FlightCatalogue


def fresh(texts, fare_class: str) -> str:
    """What the detail was before the memo: translated for this very error."""
    text = str(texts.sold_out) if texts else translation.gettext("%(fare)s is sold out.")
    return text % {"fare": errors._fare_label(fare_class)}


@pytest.fixture(autouse=True)
def empty_memo():
    errors._SOLD_OUT_TEXTS.clear()
    errors._SOLD_OUT_TITLES.clear()
    yield
    errors._SOLD_OUT_TEXTS.clear()
    errors._SOLD_OUT_TITLES.clear()


@pytest.mark.parametrize("texts", [FlightCatalogue.texts, EventCatalogue.texts, None])
@pytest.mark.parametrize("fare_class", ["ECONOMY", "BUSINESS", "GA-3"])
def test_the_kept_sentence_is_the_fresh_one_in_every_language(texts, fare_class):
    seen = set()
    for _round in range(2):  # the second round reads the memo
        for language in ("en", "de", "ru"):
            with translation.override(language):
                detail = SoldOut(fare_class, texts=texts).detail
                assert detail == fresh(texts, fare_class)
                seen.add(detail)
    assert len(seen) == 3  # each language its own words: the memo did not mix them


def test_the_next_loser_translates_nothing(monkeypatch):
    with translation.override("de"):
        first = SoldOut("ECONOMY", texts=FlightCatalogue.texts).detail
        calls = []
        monkeypatch.setattr(errors, "gettext", lambda text: calls.append(text) or text)
        monkeypatch.setattr(errors, "_fare_label", lambda code: calls.append(code) or code)
        assert SoldOut("ECONOMY", texts=FlightCatalogue.texts).detail == first
        assert calls == []
        # Control: another class is written afresh, so the fakes above are the ones used.
        assert SoldOut("BUSINESS", texts=None).detail == "BUSINESS is sold out."
        assert calls == ["%(fare)s is sold out.", "BUSINESS"]


def test_the_memo_is_bounded_by_classes_a_client_names(monkeypatch):
    monkeypatch.setattr(errors, "SOLD_OUT_TEXTS_KEPT", 3)
    for n in range(10):
        assert SoldOut(f"X{n}").detail == fresh(None, f"X{n}")
    assert len(errors._SOLD_OUT_TEXTS) == 3


def test_a_change_of_languages_forgets_the_sentences():
    SoldOut("ECONOMY", texts=FlightCatalogue.texts).detail  # noqa: B018 (kept)
    assert errors._SOLD_OUT_TEXTS
    with override_settings(LANGUAGES=[("en", "English")]):
        assert errors._SOLD_OUT_TEXTS == {}


def test_a_booking_class_sold_out_keeps_its_own_sentence():
    with translation.override("en"):
        SoldOut("ECONOMY", texts=None).detail  # noqa: B018 (kept for the fare class)
        detail = BookingClassSoldOut("ECONOMY", "SAVER").detail
    assert detail == "The SAVER fare is sold out; other fares of Economy may still be open."


@pytest.mark.parametrize("error", [SoldOut("ECONOMY"), BookingClassSoldOut("ECONOMY", "SAVER")])
def test_the_kept_title_is_the_fresh_one_in_every_language(error):
    seen = set()
    for _round in range(2):  # the second round reads the memo
        for language in ("en", "de", "ru"):
            with translation.override(language):
                assert error.title == translation.gettext("Sold out")
                seen.add(error.title)
    assert len(seen) == 3  # each language its own words (control: a memo without the language)


def test_the_next_loser_translates_no_title(monkeypatch):
    with translation.override("de"):
        first = SoldOut("ECONOMY").title
        calls = []
        monkeypatch.setattr(errors, "gettext", lambda text: calls.append(text) or text)
        assert SoldOut("ECONOMY").title == first == "Ausverkauft"
        assert calls == []
    # Control: another language is translated afresh, so the fake above is the one used.
    with translation.override("ru"):
        assert SoldOut("ECONOMY").title == "Sold out"
    assert calls == ["Sold out"]


def test_a_change_of_languages_forgets_the_titles():
    SoldOut("ECONOMY").title  # noqa: B018 (kept)
    assert errors._SOLD_OUT_TITLES
    with override_settings(LANGUAGES=[("en", "English")]):
        assert errors._SOLD_OUT_TITLES == {}
