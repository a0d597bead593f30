"""What the check-in mirror should hold, read from PostgreSQL, and what it holds."""

from __future__ import annotations

from collections import Counter, defaultdict

from bookings.models import Booking, BookingStatus, Passenger
from checkin_sync.models import AppliedEvent, CheckinBooking, CheckinPassenger, SaleTally


def truth() -> dict:
    """Every booking that was confirmed or cancelled: its status and, while confirmed, who
    travels in which seat; and per sale the bookings and passengers check-in expects."""
    bookings = {}
    tally: Counter = Counter()
    travelling = defaultdict(list)
    for row in Passenger.objects.filter(booking__status=BookingStatus.CONFIRMED).values_list(
        "booking_id", "pk", "full_name", "seat__seat_no"
    ):
        travelling[row[0]].append(row[1:])
    for pk, status, sale_id in Booking.objects.filter(
        status__in=[BookingStatus.CONFIRMED, BookingStatus.CANCELLED]
    ).values_list("pk", "status", "sale_id"):
        passengers = []
        if status == BookingStatus.CONFIRMED:
            passengers = sorted(travelling[pk])
            tally[(str(sale_id), "bookings")] += 1
            tally[(str(sale_id), "passengers")] += len(passengers)
        bookings[pk] = (str(status), passengers)
    return {"bookings": bookings, "tally": +tally}


def mirror() -> dict:
    passengers = defaultdict(list)
    for row in CheckinPassenger.objects.values_list(
        "booking_id", "passenger_id", "full_name", "seat_no"
    ):
        passengers[row[0]].append(row[1:])
    tally: Counter = Counter()
    for sale_id, bookings, people in SaleTally.objects.values_list(
        "sale_id", "bookings", "passengers"
    ):
        tally[(sale_id, "bookings")] += bookings
        tally[(sale_id, "passengers")] += people
    return {
        "bookings": {
            b.booking_id: (b.status, sorted(passengers[b.booking_id]))
            for b in CheckinBooking.objects.all()
        },
        "tally": +tally,
    }


def bookings_applied_out_of_order() -> list[str]:
    """Bookings whose events were applied in another order than their outbox ids."""
    applied = defaultdict(list)
    for booking_id, event_id in AppliedEvent.objects.order_by("id").values_list(
        "booking_id", "event_id"
    ):
        applied[booking_id].append(event_id)
    return [b for b, ids in applied.items() if ids != sorted(ids)]
