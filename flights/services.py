"""Writes on flights and fare inventory: scheduling a flight with its cabin, staff limits,
and the inventory audit that every concurrency test ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from bookings import live
from bookings.audit import check_inventory
from bookings.inventory import (
    ClassSpec,
    SeatSpec,
    block_seat,
    open_sale,
    set_fare_limits,
    unblock_seat,
)
from bookings.models import Sale, SaleKind
from flights.flight_numbers import flight_number_claimed
from flights.models import Airport, Carrier, FareClass, Flight
from flights.seat_places import places_in_row, seat_quality
from kernel.errors import InvalidRequest
from payments.currency import NotChargeable, check_chargeable

# The engine's inventory operations, where flight code (admin, tests) always found them.
__all__ = ["block_seat", "check_inventory", "set_fare_limits", "unblock_seat"]


@dataclass(frozen=True)
class CabinSection:
    fare_class: str
    rows: int
    letters: str
    price: Decimal
    overbook_limit: int = 0
    # Extra-legroom rows and their surcharge (the per-seat pricing of the event-ticket seed).
    premium_rows: tuple[int, ...] = ()
    premium_surcharge: Decimal = Decimal("0.00")


@dataclass(frozen=True)
class CabinLayout:
    """Rows numbered from 1 across sections, front to back."""

    sections: tuple[CabinSection, ...]
    currency: str = "EUR"
    name: str = field(default="custom")
    exit_rows: tuple[int, ...] = ()

    def seats(self) -> list[tuple[str, int, str, Decimal]]:
        seats, row = [], 0
        for section in self.sections:
            for _ in range(section.rows):
                row += 1
                surcharge = (
                    section.premium_surcharge if row in section.premium_rows else Decimal("0.00")
                )
                seats.extend(
                    (section.fare_class, row, letter, surcharge) for letter in section.letters
                )
        return seats


def a320_layout(
    *,
    business_price: Decimal = Decimal("420.00"),
    economy_price: Decimal = Decimal("89.00"),
    economy_overbook: int = 3,
    currency: str = "EUR",
) -> CabinLayout:
    """An A320: 3 business rows of 4 (ACDF) and 28 economy rows of 6 (ABCDEF) = 180 seats.

    Rows 4-5 and the over-wing exit rows 12-13 carry a legroom surcharge.
    """
    return CabinLayout(
        name="A320",
        currency=currency,
        exit_rows=(12, 13),
        sections=(
            CabinSection(FareClass.BUSINESS, rows=3, letters="ACDF", price=business_price),
            CabinSection(
                FareClass.ECONOMY,
                rows=28,
                letters="ABCDEF",
                price=economy_price,
                overbook_limit=economy_overbook,
                premium_rows=(4, 5, 12, 13),
                premium_surcharge=Decimal("15.00"),
            ),
        ),
    )


def announce_cabin_change(*, flight: Flight) -> None:
    """Staff changed what the cabin map draws of a flight without any seat's status moving
    (its exit rows: flagged on the map, and a hold there asks to confirm their conditions).
    Like a venue plan edit (events.plan_editing), the sale's live seat-map version moves on
    commit, so the cached map is read anew and open pickers hear a `plan` message.  A cabin
    has no plan version of its own: its seats come from the layout once, at create_flight,
    and nothing here swaps the aircraft (docs/events.md, "Cabin maps")."""
    live.announce_plan_on_commit(sale_ids=[flight.sale_id])


def open_flight_sale() -> Sale:
    """The sale a new flight will own; the flight takes its id (see `create_flight`)."""
    return Sale.objects.create(kind=SaleKind.FLIGHT, created_at=timezone.now())


def _check_chargeable_layout(layout: CabinLayout, seats: list) -> None:
    """Every fare and seat surcharge must be an amount the payment gateway charges exactly."""
    try:
        for section in layout.sections:
            check_chargeable(section.price, layout.currency)
        for _fare_class, _row, _letter, surcharge in seats:
            check_chargeable(surcharge, layout.currency)
    except NotChargeable as exc:
        raise InvalidRequest(str(exc), field="price") from None


def _seat_specs(seats: list[tuple[str, int, str, Decimal]]) -> list[SeatSpec]:
    """The engine's seats of a cabin, each with its place in its row (flights.seat_places)."""
    cabin_letters = {letter for _fare, _row, letter, _surcharge in seats}
    row_letters: dict[int, set[str]] = {}
    for _fare, row, letter, _surcharge in seats:
        row_letters.setdefault(row, set()).add(letter)
    places = {
        row: places_in_row(letters, cabin_letters=cabin_letters)
        for row, letters in row_letters.items()
    }
    return [
        SeatSpec(
            seat_no=f"{row}{letter}",
            row=row,
            letter=letter,
            fare_class=fare_class,
            surcharge=surcharge,
            row_key=str(row),
            place=places[row][letter],
            quality=seat_quality(row),
        )
        for fare_class, row, letter, surcharge in seats
    ]


def create_flight(
    *,
    code: str,
    origin: Airport,
    destination: Airport,
    departure_at: datetime,
    arrival_at: datetime,
    layout: CabinLayout | None = None,
    carrier: Carrier | None = None,
) -> Flight:
    """Schedule a flight with its sale: fare inventory and every seat of its cabin.

    The sale is created first and the flight takes **the same id** (as the migration gave
    every existing flight).  So a flight id is also its sale id: the seat-map group, the Redis
    hold keys, ticket codes and partner events all keep the numbers they always had, and no
    flight id can ever be the id of another catalogue's sale.  Front doors still map a flight
    to its sale through `flight.sale_id` / `selectors.sale_id_of_flight`, never by assuming.
    """
    layout = layout or a320_layout()
    # A flight number starts with its carrier's designator ("LH190"): the carrier by default.
    carrier = carrier or Carrier.objects.filter(code=code[:2].upper()).first()
    if origin.pk == destination.pk:
        raise InvalidRequest("A flight needs two different airports.")
    if arrival_at <= departure_at:
        raise InvalidRequest("A flight arrives after it departs.")
    seats = layout.seats()
    _check_chargeable_layout(layout, seats)
    # The number first, in its own transaction (a global rule): then the sale's rows alone.
    with flight_number_claimed(code=code, departure_at=departure_at), transaction.atomic():
        sale = open_sale(
            kind=SaleKind.FLIGHT,
            classes=[
                ClassSpec(
                    code=section.fare_class,
                    capacity=sum(1 for s in seats if s[0] == section.fare_class),
                    price=section.price,
                    currency=layout.currency,
                    overbook_limit=section.overbook_limit,
                )
                for section in layout.sections
            ],
            seats=_seat_specs(seats),
        )
        flight = Flight.objects.create(
            id=sale.pk,
            sale=sale,
            code=code,
            carrier=carrier,
            origin=origin,
            destination=destination,
            departure_at=departure_at,
            arrival_at=arrival_at,
            exit_rows=list(layout.exit_rows),
        )
    return flight
