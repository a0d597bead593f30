"""Reads for the seat picker page: the cabin drawn row by row for one fare class, and the live
snapshot of every seat's status with the version of the last change it contains (the page
applies the websocket's later messages on top of it)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.utils import timezone

from bookings.live import current_version
from flights.models import FareClass, Flight, Seat, SeatStatus

# Days outside this range cannot hold a flight, and their UTC bounds may not be representable.
from flights.selectors import sale_id_of_flight


def seat_map_snapshot(*, flight_id: int) -> dict:
    """Every seat's status, with the version of the last change already contained in it.

    The version is read first: a change that lands in between is then in the seats as well
    and its message (a higher version) is applied again harmlessly, because messages carry
    statuses, not deltas.
    """
    version = current_version(sale_id_of_flight(flight_id) or 0)
    now = timezone.now()
    seats = {}
    for seat_no, status, held_until in Seat.objects.filter(
        sale_id=sale_id_of_flight(flight_id)
    ).values_list("seat_no", "status", "held_until"):
        if status == SeatStatus.HELD and held_until <= now:
            status = SeatStatus.AVAILABLE
        seats[seat_no] = status
    return {"flightId": flight_id, "version": version, "seats": seats}


@dataclass(frozen=True)
class SeatCell:
    seat_no: str
    letter: str
    fare_class: str
    status: str
    surcharge: Decimal
    position: str  # window / middle / aisle
    in_fare: bool  # sold in the fare class being picked

    @property
    def fare_label(self) -> str:
        return FareClass(self.fare_class).label

    @property
    def is_free(self) -> bool:
        return self.status == SeatStatus.AVAILABLE


@dataclass(frozen=True)
class CabinRow:
    number: int
    fare_class: str
    fare_label: str
    # One entry per column, left to right; None is an empty place (a wider business seat).
    left: list[SeatCell | None]
    right: list[SeatCell | None]
    is_exit: bool = False
    # The row's surcharge when all its seats share one (drawn next to the row number).
    surcharge: Decimal = Decimal("0.00")


def cabin_rows(*, flight_id: int, fare_class: str) -> tuple[list[str], list[str], list[CabinRow]]:
    """The cabin row by row, for drawing: (letters left of the aisle, letters right of it,
    rows).  The aisle runs between the two halves of all the cabin's seat letters."""
    snapshot_at = timezone.now()
    seats = list(
        Seat.objects.filter(sale_id=sale_id_of_flight(flight_id))
        .order_by("row", "letter")
        .values_list("seat_no", "row", "letter", "fare_class", "status", "held_until", "surcharge")
    )
    letters = sorted({s[2] for s in seats})
    exit_rows = set(
        Flight.objects.filter(pk=flight_id).values_list("exit_rows", flat=True).first() or ()
    )
    half = (len(letters) + 1) // 2
    windows = {letters[0], letters[-1]} if letters else set()
    by_aisle = set(letters[half - 1 : half + 1])
    rows: dict[int, dict] = {}
    for seat_no, row, letter, seat_fare, status, held_until, surcharge in seats:
        if status == SeatStatus.HELD and held_until <= snapshot_at:
            status = SeatStatus.AVAILABLE
        position = "window" if letter in windows else "aisle" if letter in by_aisle else "middle"
        cell = SeatCell(
            seat_no, letter, seat_fare, status, surcharge, position, seat_fare == fare_class
        )
        rows.setdefault(row, {"fare_class": seat_fare, "cells": {}})["cells"][letter] = cell
    drawn = [
        CabinRow(
            number=number,
            fare_class=data["fare_class"],
            fare_label=FareClass(data["fare_class"]).label,
            left=[data["cells"].get(letter) for letter in letters[:half]],
            right=[data["cells"].get(letter) for letter in letters[half:]],
            is_exit=number in exit_rows,
            surcharge=max((c.surcharge for c in data["cells"].values()), default=Decimal("0.00")),
        )
        for number, data in sorted(rows.items())
    ]
    return letters[:half], letters[half:], drawn
