"""Writes on flights and fare inventory: scheduling a flight with its cabin, staff limits,
and the inventory audit that every concurrency test ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.db.models import Count, F, Q, Sum, Value
from django.utils import timezone

from bookings.models import Booking, BookingStatus, Passenger
from flights import availability
from flights.live import announce_seats_on_commit
from flights.models import Airport, FareClass, FareInventory, Flight, Seat, SeatStatus
from kernel.errors import InvalidRequest
from waitroom import services as waitlist


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


def create_flight(
    *,
    code: str,
    origin: Airport,
    destination: Airport,
    departure_at: datetime,
    arrival_at: datetime,
    layout: CabinLayout | None = None,
) -> Flight:
    """Schedule a flight with its fare inventory and every seat of its cabin."""
    layout = layout or a320_layout()
    if origin.pk == destination.pk:
        raise InvalidRequest("A flight needs two different airports.")
    if arrival_at <= departure_at:
        raise InvalidRequest("A flight arrives after it departs.")
    seats = layout.seats()
    with transaction.atomic():
        flight = Flight.objects.create(
            code=code,
            origin=origin,
            destination=destination,
            departure_at=departure_at,
            arrival_at=arrival_at,
            exit_rows=list(layout.exit_rows),
        )
        FareInventory.objects.bulk_create(
            FareInventory(
                flight=flight,
                fare_class=section.fare_class,
                capacity=sum(1 for s in seats if s[0] == section.fare_class),
                overbook_limit=section.overbook_limit,
                price=section.price,
                currency=layout.currency,
            )
            for section in layout.sections
        )
        Seat.objects.bulk_create(
            Seat(
                flight=flight,
                seat_no=f"{row}{letter}",
                row=row,
                letter=letter,
                fare_class=fare_class,
                surcharge=surcharge,
            )
            for fare_class, row, letter, surcharge in seats
        )
        for section in layout.sections:  # a fresh flight's counters need no query
            availability.seed_counter(
                flight_id=flight.pk,
                fare_class=section.fare_class,
                available=sum(1 for s in seats if s[0] == section.fare_class)
                + section.overbook_limit,
            )
    return flight


def set_fare_limits(
    *, inventory_id: int, capacity: int, overbook_limit: int, price: Decimal
) -> FareInventory:
    """Staff change of a fare class's limits.  Refuses limits below what is already sold or held.

    Only the editable columns are written, by a conditional UPDATE: `sold` and `held` keep
    moving under concurrent holds and must never be overwritten by a stale admin form.
    """
    if capacity < 0 or overbook_limit < 0 or price < 0:
        raise InvalidRequest("Capacity, overbook limit and price cannot be negative.")
    with transaction.atomic():
        updated = FareInventory.objects.filter(
            pk=inventory_id, sold__lte=Value(capacity + overbook_limit) - F("held")
        ).update(capacity=capacity, overbook_limit=overbook_limit, price=price)
        inventory = FareInventory.objects.get(pk=inventory_id)
        if not updated:
            raise InvalidRequest(
                f"Capacity + overbook limit ({capacity + overbook_limit}) would be below the "
                f"{inventory.sold} sold and {inventory.held} held units.",
                field="capacity",
            )
        if inventory.available:
            waitlist.offer_freed_units(
                flight_id=inventory.flight_id, fare_class=inventory.fare_class, now=timezone.now()
            )
            inventory.refresh_from_db()
        availability.seed_counter(
            flight_id=inventory.flight_id,
            fare_class=inventory.fare_class,
            available=inventory.available,
        )
    return inventory


# --- the audit ---------------------------------------------------------------------------------


def check_inventory(*, flight_id: int | None = None) -> list[str]:
    """Compare every counter with the rows it summarises.

    Returns drift descriptions; [] is clean."""
    problems: list[str] = []
    inventories = FareInventory.objects.select_related("flight").order_by("flight_id", "fare_class")
    bookings = Booking.objects.all()
    seats = Seat.objects.all()
    passengers = Passenger.objects.all()
    if flight_id is not None:
        inventories = inventories.filter(flight_id=flight_id)
        bookings = bookings.filter(flight_id=flight_id)
        seats = seats.filter(flight_id=flight_id)
        passengers = passengers.filter(booking__flight_id=flight_id)

    totals = {
        (row["flight_id"], row["fare_class"]): row
        for row in bookings.values("flight_id", "fare_class").annotate(
            held=Sum("seat_count", filter=Q(status=BookingStatus.HELD), default=0),
            sold=Sum("seat_count", filter=Q(status=BookingStatus.CONFIRMED), default=0),
        )
    }
    for inv in inventories:
        counted = totals.get((inv.flight_id, inv.fare_class), {"held": 0, "sold": 0})
        where = f"flight {inv.flight_id} {inv.fare_class}"
        if inv.held != counted["held"]:
            problems.append(f"{where}: held={inv.held} but HELD bookings cover {counted['held']}")
        if inv.sold != counted["sold"]:
            problems.append(
                f"{where}: sold={inv.sold} but CONFIRMED bookings cover {counted['sold']}"
            )
        if inv.sold + inv.held > inv.capacity + inv.overbook_limit:
            problems.append(f"{where}: sold+held exceeds capacity+overbook_limit")

    expected_seat_status = {
        BookingStatus.HELD: SeatStatus.HELD,
        BookingStatus.CONFIRMED: SeatStatus.SOLD,
    }
    taken = seats.filter(status__in=[SeatStatus.HELD, SeatStatus.SOLD]).select_related("booking")
    for seat in taken:
        booking = seat.booking
        if booking is None or expected_seat_status.get(booking.status) != seat.status:
            state = booking.status if booking else "no booking"
            problems.append(f"seat {seat.flight_id}/{seat.seat_no} is {seat.status} for {state}")
    for seat_no, fid, status in seats.filter(
        status__in=[SeatStatus.AVAILABLE, SeatStatus.BLOCKED], passengers__is_live=True
    ).values_list("seat_no", "flight_id", "status"):
        problems.append(f"seat {fid}/{seat_no} is {status} but a live passenger holds it")

    for p in passengers.filter(is_live=True, seat__isnull=False).select_related("seat"):
        if p.seat.booking_id != p.booking_id:
            problems.append(
                f"passenger {p.pk} of booking {p.booking_id} points at seat {p.seat.seat_no} "
                "of another booking"
            )
    live = [BookingStatus.HELD, BookingStatus.CONFIRMED]
    for b in bookings.annotate(
        live_passengers=Count("passengers", filter=Q(passengers__is_live=True))
    ).values("id", "status", "seat_count", "live_passengers"):
        expected = b["seat_count"] if b["status"] in live else 0
        if b["live_passengers"] != expected:
            problems.append(
                f"booking {b['id']} ({b['status']}) has {b['live_passengers']} live passengers, "
                f"expected {expected}"
            )
    return problems


def block_seat(*, flight_id: int, seat_no: str) -> bool:
    """Take an AVAILABLE seat out of sale (broken, crew rest...).  Returns whether it changed.

    A blocked seat is no longer sellable capacity, so the fare class loses one unit too —
    conditionally, so it can never drop below what is already sold or held.
    """
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(flight_id=flight_id, seat_no=seat_no, status=SeatStatus.AVAILABLE)
            .first()
        )
        if seat is None:
            return False
        shrunk = FareInventory.objects.filter(
            flight_id=flight_id,
            fare_class=seat.fare_class,
            capacity__gte=1,
            sold__lte=F("capacity") - 1 + F("overbook_limit") - F("held"),
        ).update(capacity=F("capacity") - 1)
        if not shrunk:
            raise InvalidRequest(
                f"Seat {seat_no} cannot be blocked: "
                f"every unit of {seat.fare_class} is sold or held."
            )
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.BLOCKED)
        announce_seats_on_commit(flight_id=flight_id, seats=[seat_no], status=SeatStatus.BLOCKED)
    return True


def unblock_seat(*, flight_id: int, seat_no: str) -> bool:
    """Return a BLOCKED seat to sale; its fare class gains the unit back."""
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(flight_id=flight_id, seat_no=seat_no, status=SeatStatus.BLOCKED)
            .first()
        )
        if seat is None:
            return False
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.AVAILABLE)
        FareInventory.objects.filter(flight_id=flight_id, fare_class=seat.fare_class).update(
            capacity=F("capacity") + 1
        )
        availability.give_back(flight_id=flight_id, fare_class=seat.fare_class, units=1)
        # Announced before the waitlist runs: an offer that takes this seat announces HELD
        # after it, and on_commit callbacks run (and get versions) in registration order.
        announce_seats_on_commit(flight_id=flight_id, seats=[seat_no], status=SeatStatus.AVAILABLE)
        waitlist.offer_freed_units(
            flight_id=flight_id, fare_class=seat.fare_class, now=timezone.now()
        )
    return True
