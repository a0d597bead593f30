"""Staff operations on a sale's inventory: class limits, blocking and unblocking seats.

Units that come free go to the waitlist inside the same transaction."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.db.models import F, Value
from django.utils import timezone

from bookings import availability
from bookings.errors import InvalidRequest
from bookings.live import announce_seats_on_commit
from bookings.models import Inventory, Seat, SeatStatus
from waitroom import services as waitlist


def set_fare_limits(
    *, inventory_id: int, capacity: int, overbook_limit: int, price: Decimal
) -> Inventory:
    """Staff change of a fare class's limits.  Refuses limits below what is already sold or held.

    Only the editable columns are written, by a conditional UPDATE: `sold` and `held` keep
    moving under concurrent holds and must never be overwritten by a stale admin form.
    """
    if capacity < 0 or overbook_limit < 0 or price < 0:
        raise InvalidRequest("Capacity, overbook limit and price cannot be negative.")
    with transaction.atomic():
        updated = Inventory.objects.filter(
            pk=inventory_id, sold__lte=Value(capacity + overbook_limit) - F("held")
        ).update(capacity=capacity, overbook_limit=overbook_limit, price=price)
        inventory = Inventory.objects.get(pk=inventory_id)
        if not updated:
            raise InvalidRequest(
                f"Capacity + overbook limit ({capacity + overbook_limit}) would be below the "
                f"{inventory.sold} sold and {inventory.held} held units.",
                field="capacity",
            )
        if inventory.available:
            waitlist.offer_freed_units(
                sale_id=inventory.sale_id, fare_class=inventory.fare_class, now=timezone.now()
            )
            inventory.refresh_from_db()
        availability.seed_counter(
            sale_id=inventory.sale_id,
            fare_class=inventory.fare_class,
            available=inventory.available,
        )
    return inventory


def block_seat(*, sale_id: int, seat_no: str) -> bool:
    """Take an AVAILABLE seat out of sale (broken, crew rest...).  Returns whether it changed.

    A blocked seat is no longer sellable capacity, so the fare class loses one unit too —
    conditionally, so it can never drop below what is already sold or held.
    """
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=sale_id, seat_no=seat_no, status=SeatStatus.AVAILABLE)
            .first()
        )
        if seat is None:
            return False
        shrunk = Inventory.objects.filter(
            sale_id=sale_id,
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
        announce_seats_on_commit(sale_id=sale_id, seats=[seat_no], status=SeatStatus.BLOCKED)
    return True


def unblock_seat(*, sale_id: int, seat_no: str) -> bool:
    """Return a BLOCKED seat to sale; its fare class gains the unit back."""
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=sale_id, seat_no=seat_no, status=SeatStatus.BLOCKED)
            .first()
        )
        if seat is None:
            return False
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.AVAILABLE)
        Inventory.objects.filter(sale_id=sale_id, fare_class=seat.fare_class).update(
            capacity=F("capacity") + 1
        )
        availability.give_back(sale_id=sale_id, fare_class=seat.fare_class, units=1)
        # Announced before the waitlist runs: an offer that takes this seat announces HELD
        # after it, and on_commit callbacks run (and get versions) in registration order.
        announce_seats_on_commit(sale_id=sale_id, seats=[seat_no], status=SeatStatus.AVAILABLE)
        waitlist.offer_freed_units(sale_id=sale_id, fare_class=seat.fare_class, now=timezone.now())
    return True
