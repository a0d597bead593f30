"""The inventory audit that every concurrency test ends with: counters against the rows they
summarise, per sale and inventory class."""

from __future__ import annotations

from django.db.models import Count, Q, Sum

from bookings import catalogue
from bookings.models import (
    Booking,
    BookingClass,
    BookingStatus,
    Inventory,
    Passenger,
    Seat,
    SeatStatus,
)


def check_inventory(*, sale_id: int | None = None) -> list[str]:
    """Compare every counter with the rows it summarises.

    Returns drift descriptions; [] is clean."""
    problems: list[str] = []
    inventories = Inventory.objects.select_related("sale").order_by("sale_id", "fare_class")
    bookings = Booking.objects.all()
    seats = Seat.objects.all()
    passengers = Passenger.objects.all()
    if sale_id is not None:
        inventories = inventories.filter(sale_id=sale_id)
        bookings = bookings.filter(sale_id=sale_id)
        seats = seats.filter(sale_id=sale_id)
        passengers = passengers.filter(booking__sale_id=sale_id)

    totals = {
        (row["sale_id"], row["fare_class"]): row
        for row in bookings.values("sale_id", "fare_class").annotate(
            held=Sum("seat_count", filter=Q(status=BookingStatus.HELD), default=0),
            sold=Sum("seat_count", filter=Q(status=BookingStatus.CONFIRMED), default=0),
        )
    }
    for inv in inventories:
        counted = totals.get((inv.sale_id, inv.fare_class), {"held": 0, "sold": 0})
        where = f"sale {inv.sale_id} {inv.fare_class}"
        if inv.held != counted["held"]:
            problems.append(f"{where}: held={inv.held} but HELD bookings cover {counted['held']}")
        if inv.sold != counted["sold"]:
            problems.append(
                f"{where}: sold={inv.sold} but CONFIRMED bookings cover {counted['sold']}"
            )
        if inv.sold + inv.held > inv.capacity + inv.overbook_limit:
            problems.append(f"{where}: sold+held exceeds capacity+overbook_limit")

    problems += _nested_class_drift(bookings, sale_id=sale_id)

    # Seatless units of a class its catalogue sells only by seat (an event's seated
    # category): places the seat map would still show free.
    seatless = {
        (row["booking__sale_id"], row["booking__fare_class"]): row["n"]
        for row in passengers.filter(is_live=True, seat__isnull=True)
        .values("booking__sale_id", "booking__fare_class")
        .annotate(n=Count("id"))
    }
    for inv in inventories:
        n = seatless.get((inv.sale_id, inv.fare_class), 0)
        if n and not catalogue.sells_seatless(inv.sale, inv.fare_class):
            problems.append(
                f"sale {inv.sale_id} {inv.fare_class}: {n} live unit(s) without a seat in a "
                "class sold only by seat"
            )

    expected_seat_status = {
        BookingStatus.HELD: SeatStatus.HELD,
        BookingStatus.CONFIRMED: SeatStatus.SOLD,
    }
    taken = seats.filter(status__in=[SeatStatus.HELD, SeatStatus.SOLD]).select_related("booking")
    for seat in taken:
        booking = seat.booking
        if booking is None or expected_seat_status.get(booking.status) != seat.status:
            state = booking.status if booking else "no booking"
            problems.append(f"seat {seat.sale_id}/{seat.seat_no} is {seat.status} for {state}")
    for seat_no, fid, status in seats.filter(
        status__in=[SeatStatus.AVAILABLE, SeatStatus.BLOCKED], passengers__is_live=True
    ).values_list("seat_no", "sale_id", "status"):
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


def _nested_class_drift(bookings, *, sale_id: int | None) -> list[str]:
    """Each booking class counts the held and sold units of itself and every lower rank
    (docs/fare-classes.md): recount them from the bookings."""
    classes = BookingClass.objects.order_by("sale_id", "fare_class", "rank")
    if sale_id is not None:
        classes = classes.filter(sale_id=sale_id)
    classes = list(classes)
    if not classes:
        return []
    counted = {
        (row["sale_id"], row["fare_class"], row["booking_class"]): row
        for row in bookings.exclude(booking_class="")
        .values("sale_id", "fare_class", "booking_class")
        .annotate(
            held=Sum("seat_count", filter=Q(status=BookingStatus.HELD), default=0),
            sold=Sum("seat_count", filter=Q(status=BookingStatus.CONFIRMED), default=0),
        )
    }
    problems = []
    for bc in classes:
        covered = [
            counted.get((bc.sale_id, bc.fare_class, c.code), {"held": 0, "sold": 0})
            for c in classes
            if (c.sale_id, c.fare_class) == (bc.sale_id, bc.fare_class) and c.rank <= bc.rank
        ]
        held, sold = sum(r["held"] for r in covered), sum(r["sold"] for r in covered)
        where = f"sale {bc.sale_id} {bc.fare_class}/{bc.code}"
        if (bc.held, bc.sold) != (held, sold):
            problems.append(
                f"{where}: held/sold={bc.held}/{bc.sold} but its and lower classes' "
                f"bookings cover {held}/{sold}"
            )
        if bc.sold + bc.held > bc.auth_limit:
            problems.append(f"{where}: sold+held exceeds its nested limit {bc.auth_limit}")
    return problems
