"""`{% load money %}`: locale-aware money and dates for templates.

{{ amount|money:currency }}     1.234,00 € / 1 234,00 ₽ / €1,234.00
{{ amount|money_short:currency }}   15 € / €15 (whole amounts only; others as `money`)
{{ dt|day }}  {{ dt|longday }}  {{ dt|clock }}  {{ dt|when }}   (the datetime's own zone)
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from django import template

from languages import formatting

register = template.Library()


@register.filter
def money(amount: Decimal | int | str | None, currency: str) -> str:
    if amount is None or amount == "":
        return ""
    return formatting.format_money(amount, currency)


@register.filter
def money_short(amount: Decimal | int | str | None, currency: str) -> str:
    """`{{ amount|money_short:currency }}`: a whole amount without its decimals, for tight
    spots such as a seat row's surcharge ("€15", "15 €"); other amounts as `money`."""
    if amount is None or amount == "":
        return ""
    return formatting.format_money_short(amount, currency)


@register.filter
def day(value: date | datetime | None) -> str:
    return formatting.format_day(value) if value else ""


@register.filter
def longday(value: date | datetime | None) -> str:
    return formatting.format_long_day(value) if value else ""


@register.filter
def clock(value: datetime | None) -> str:
    return formatting.format_clock(value) if value else ""


@register.filter
def when(value: datetime | None) -> str:
    return formatting.format_when(value) if value else ""
