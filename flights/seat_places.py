"""Where a cabin seat stands in its row (the engine's adjacency, bookings.adjacency).

The one aisle rule of a cabin, which the seat picker draws too (flights.cabin_map): the aisle
runs between the two halves of all the cabin's seat letters (ABC | DEF on an A320, so business
ACDF is AC | DF).  A row's seats take places 1, 2, ... from the left, and the right half
starts one place further, the aisle's step: 12C and 12D are never side by side.
"""

from __future__ import annotations

from collections.abc import Iterable


def aisle_split(cabin_letters: Iterable[str]) -> tuple[list[str], list[str]]:
    """The cabin's letters left and right of the aisle."""
    letters = sorted(set(cabin_letters))
    half = (len(letters) + 1) // 2
    return letters[:half], letters[half:]


def places_in_row(row_letters: Iterable[str], *, cabin_letters: Iterable[str]) -> dict[str, int]:
    """Letter -> place for one row's seats (a wide business seat leaves no gap: A and C of
    an ACDF row are side by side)."""
    left, _right = aisle_split(cabin_letters)
    mine = sorted(set(row_letters))
    on_left = [letter for letter in mine if letter in left]
    on_right = [letter for letter in mine if letter not in left]
    places = {letter: i for i, letter in enumerate(on_left, start=1)}
    places.update({letter: len(on_left) + 1 + i for i, letter in enumerate(on_right, start=1)})
    return places


def seat_quality(row: int) -> float:
    """Best available on a plane: the front first."""
    return float(row)
