"""Template helpers that ask the catalogue how to name what the engine sells."""

from django import template

from bookings import catalogue

register = template.Library()


@register.filter
def class_label(code: str) -> str:
    """`{{ booking.fare_class|class_label }}`: "Economy" for a flight's ECONOMY."""
    return catalogue.class_label(code)
