"""Money and dates as the reader's locale writes them (Babel's CLDR data), never by string
formatting: 1.234,00 € (de), 1 234,00 ₽ (ru), €1,234.00 (en).  Amounts stay Decimal."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from babel.dates import format_date, format_skeleton
from babel.numbers import format_compact_currency, format_currency
from django.utils import translation


def babel_locale(language: str | None = None) -> str:
    """Babel's name for a Django language code ("en-us" -> "en_US")."""
    code = language or translation.get_language() or "en"
    return translation.to_locale(code)


def format_money(amount: Decimal | int | str, currency: str, language: str | None = None) -> str:
    """An amount in the active (or given) language, with the currency's own decimals."""
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    return format_currency(value, currency, locale=babel_locale(language))


def format_money_short(
    amount: Decimal | int | str, currency: str, language: str | None = None
) -> str:
    """A whole amount under 1,000 without decimals ("€15", "15 €"); any other as
    format_money (the compact format would write 1,500 as "€2K")."""
    value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    if value != value.to_integral_value() or abs(value) >= 1000:
        return format_money(value, currency, language)
    return format_compact_currency(
        value, currency, fraction_digits=0, locale=babel_locale(language)
    )


def format_day(value: date | datetime, language: str | None = None) -> str:
    """Weekday, day, month and year: "Tue, Dec 1, 2026", "Di., 1. Dez. 2026"."""
    return format_skeleton("yMMMEd", value, locale=babel_locale(language))


def format_long_day(value: date | datetime, language: str | None = None) -> str:
    """Full weekday and month: "Tuesday, December 1, 2026", "Dienstag, 1. Dezember 2026"."""
    return format_date(value, format="full", locale=babel_locale(language))


def format_clock(value: datetime, language: str | None = None) -> str:
    """24-hour time, as airports print it: "14:05"."""
    return format_skeleton("Hm", value, tzinfo=value.tzinfo, locale=babel_locale(language))


def format_when(value: datetime, language: str | None = None) -> str:
    """Day and time in the datetime's own zone: "Tue, Dec 1, 2026, 14:05"."""
    return f"{format_day(value, language)}, {format_clock(value, language)}"


def format_when_in_zone(moment: datetime, zone: str) -> str:
    """`moment` as a ticket prints it: day and time as the reader's language writes them, in
    the place's own zone (the airport's, the venue's), with the zone's name."""
    local = moment.astimezone(ZoneInfo(zone))
    return f"{format_when(local)} {local.tzname()}"
