"""Money and dates as each language writes them (Babel), never by string formatting."""

from datetime import date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.template import Context, Template
from django.utils import translation

from languages.formatting import format_clock, format_day, format_money, format_when

NBSP = "\u00a0"
NNBSP = "\u202f"  # CLDR's narrow no-break space ("2026 г.")


@pytest.mark.parametrize(
    ("language", "amount", "currency", "expected"),
    [
        ("de", "1234.00", "EUR", f"1.234,00{NBSP}€"),
        ("ru", "1234.00", "RUB", f"1{NBSP}234,00{NBSP}₽"),
        ("en", "1234.00", "EUR", "€1,234.00"),
        ("ru", "1234.5", "EUR", f"1{NBSP}234,50{NBSP}€"),
        ("de", "0.1", "EUR", f"0,10{NBSP}€"),
    ],
)
def test_money_follows_the_language(language, amount, currency, expected):
    assert format_money(Decimal(amount), currency, language) == expected


def test_money_keeps_decimal_precision_no_float_rounding():
    # 0.1 + 0.2 as floats is 0.30000000000000004; as Decimal it stays exact.
    assert format_money(Decimal("0.1") + Decimal("0.2"), "EUR", "en") == "€0.30"
    assert format_money(Decimal("1234567.885"), "EUR", "en") == "€1,234,567.88"  # banker's


def test_money_filter_uses_the_active_language():
    template = Template("{% load money %}{{ amount|money:currency }}")
    context = Context({"amount": Decimal("1234.00"), "currency": "EUR"})
    rendered = {}
    for language in ("en", "de", "ru"):
        with translation.override(language):
            rendered[language] = template.render(context)
    assert rendered == {"en": "€1,234.00", "de": f"1.234,00{NBSP}€", "ru": f"1{NBSP}234,00{NBSP}€"}


def test_dates_and_times_follow_the_language_in_the_datetimes_own_zone():
    moment = datetime(2026, 12, 1, 14, 5, tzinfo=ZoneInfo("Asia/Ho_Chi_Minh"))
    assert format_when(moment, "en") == "Tue, Dec 1, 2026, 14:05"
    assert format_when(moment, "de") == "Di., 1. Dez. 2026, 14:05"
    assert format_when(moment, "ru") == f"вт, 1 дек. 2026{NNBSP}г., 14:05"
    assert format_clock(moment, "ru") == "14:05"  # local to the airport, not UTC (07:05)
    assert format_day(date(2026, 3, 2), "de") == "Mo., 2. März 2026"


def test_date_filters_render_in_the_active_language():
    template = Template("{% load money %}{{ when|longday }} · {{ when|clock }}")
    moment = datetime(2026, 12, 1, 14, 5, tzinfo=ZoneInfo("Europe/Berlin"))
    with translation.override("de"):
        assert template.render(Context({"when": moment})) == "Dienstag, 1. Dezember 2026 · 14:05"
    with translation.override("ru"):
        assert (
            template.render(Context({"when": moment}))
            == f"вторник, 1 декабря 2026{NNBSP}г. · 14:05"
        )
