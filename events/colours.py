"""Colours on the seat plan, by WCAG 2.x: the text and marks drawn on a category's colour (a
chosen seat's tick, its number) and the check staff meet when they save a category colour."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# What a free seat must stand out from: a taken seat's grey and the page's white card.
TAKEN_SEAT = "#e5e7eb"
CARD = "#ffffff"
# Non-text contrast (WCAG 1.4.11): a seat against what is next to it, a mark against a seat.
MIN_CONTRAST = 3.0
INKS = ("#ffffff", "#111827")


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance of `colour` (#rrggbb): 0 for black, 1 for white."""
    channels = []
    for i in (1, 3, 5):
        c = int(colour[i : i + 2], 16) / 255
        channels.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def ink_for(colour: str) -> str:
    """White or near-black, whichever contrasts more with `colour`: the seat's number and a
    chosen seat's tick and ring are drawn in it (about 4.5:1 at worst, on mid grey)."""
    return max(INKS, key=lambda ink: contrast_ratio(ink, colour))


def validate_category_colour(colour: str) -> None:
    """A price category's colour must stand out from taken seats (grey) and the page (white),
    or a free seat of it looks taken.  Malformed values are the hex check's to refuse."""
    if len(colour) != 7 or not colour.startswith("#"):
        return
    try:
        worst = min(contrast_ratio(colour, TAKEN_SEAT), contrast_ratio(colour, CARD))
    except ValueError:
        return
    if worst < MIN_CONTRAST:
        raise ValidationError(
            _(
                "%(colour)s is too light for the seat plan: its seats would look taken. "
                "Choose a darker colour (contrast at least 3:1 with light grey %(taken)s; "
                "this one has %(ratio).1f:1), for example #2563eb."
            ),
            code="low_contrast",
            params={"colour": colour, "taken": TAKEN_SEAT, "ratio": worst},
        )
