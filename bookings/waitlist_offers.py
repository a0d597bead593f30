"""The waitlist's offers (bookings.waitlist): the hold made for one waiting entry when units
free up (its seats: the best acceptable block side by side), and how an offer ends (lapsed
unpaid, or booked).  Which entry gets an offer, in join order, is `waitlist.offer_freed_units`;
the engine reaches these through `bookings.waitlist` too."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import connection

from bookings import adjacency, catalogue, holding, outbox_payloads
from bookings.live import announce_seats_on_commit
from bookings.models import Booking, Inventory, Seat, SeatStatus, WaitlistEntry, WaitlistStatus
from kernel.locking import lock_seats
from kernel.models import OutboxEvent
from kernel.outbox import emit_events
from kernel.outbox_types import OutboxEventType


def offer_ttl() -> timedelta:
    return settings.SEATKEEPER["WAITLIST_OFFER_TTL"]


class NoBlock(Exception):
    """No acceptable block of free seats for this entry now: it keeps its place."""


def hold_for_entry(entry: WaitlistEntry, inventory: Inventory, now: datetime) -> Booking | None:
    n = entry.party_size
    seats = best_seats(inventory, entry)
    if seats is None:
        raise NoBlock()
    if not seats and not catalogue.sells_seatless(inventory.sale, inventory.fare_class):
        return None  # its free seats are being locked by someone right now: a later release
    if not holding.reserve_units(
        sale_id=inventory.sale_id, fare_class=inventory.fare_class, units=n
    ):
        return None
    expires_at = now + offer_ttl()
    booking = holding.create_held_booking(
        customer_id=entry.customer_id,
        sale_id=inventory.sale_id,
        fare_class=inventory.fare_class,
        units=n,
        seats=seats,
        amount=inventory.price * n + sum((s.surcharge for s in seats), Decimal(0)),
        currency=inventory.currency,
        expires_at=expires_at,
        now=now,
    )
    if seats:
        # After the release's AVAILABLE (same transaction, registered earlier): pages end on HELD.
        announce_seats_on_commit(
            sale_id=inventory.sale_id, seats=[s.seat_no for s in seats], status=SeatStatus.HELD
        )
    WaitlistEntry.objects.filter(pk=entry.pk).update(
        status=WaitlistStatus.OFFERED, offer=booking, offered_at=now
    )
    entry.status, entry.offer, entry.offered_at = WaitlistStatus.OFFERED, booking, now
    emit_events(
        [
            OutboxEvent(
                sale_id=booking.sale_id,
                aggregate_type="booking",
                aggregate_id=str(booking.pk),
                event_type=OutboxEventType.WAITLIST_OFFERED,
                payload=outbox_payloads.waitlist_offered(
                    booking,
                    customer_id=entry.customer_id,
                    entry_id=entry.pk,
                    party_size=n,
                    seats=[s.seat_no for s in seats],
                    expires_at=expires_at,
                ),
            )
        ]
    )
    return booking


def best_seats(inventory: Inventory, entry: WaitlistEntry) -> list[Seat] | None:
    """The entry's seats: the best block of `party_size` free seats side by side in one row
    (bookings.adjacency), in its sections and within its price ceiling, by the single-seat
    rule of best available (a block that strands a seat only if nothing else fits).  [] when
    the class has no free seat this transaction can lock (a seatless offer, where the class
    sells them); None when free seats exist but no acceptable block: the entry keeps its
    place."""
    # We hold the inventory lock, which comes after seats (docs/architecture.md, "Lock
    # order"): only try seats.  A seat locked by someone else counts as taken.
    free = lock_seats(
        Seat.objects.filter(
            sale_id=inventory.sale_id, fare_class=inventory.fare_class, status=SeatStatus.AVAILABLE
        ),
        skip_locked=True,
    )
    free = list(free)
    if not free:
        return []
    rows = adjacency.by_row(free)
    for may_strand in (False, True):
        found = [
            best
            for row in rows.values()
            if (
                best := adjacency.best_block(
                    row,
                    n=entry.party_size,
                    free={s.seat_no for s in row},
                    pickable=lambda seat: acceptable(seat, entry, inventory.price),
                    may_strand=may_strand or not inventory.sale.keeps_no_single_seats,
                )
            )
        ]
        if found:
            return min(found, key=lambda b: (sum(s.quality for s in b[0]), b[0][0].row))[0]
    return None


def acceptable(seat: Seat, entry: WaitlistEntry, price: Decimal) -> bool:
    if entry.sections and seat.section not in entry.sections:
        return False
    return entry.max_seat_price is None or price + seat.surcharge <= entry.max_seat_price


def close_offers(*, booking_ids: list[int], now: datetime) -> int:
    """Offers whose hold ended unpaid (expired or given up) lapse; called by close_bookings."""
    return WaitlistEntry.objects.filter(
        offer_id__in=booking_ids, status=WaitlistStatus.OFFERED
    ).update(status=WaitlistStatus.LAPSED, closed_at=now)


def mark_offer_booked(*, booking_id: int, now: datetime) -> int:
    """The customer paid for their offer; called in the confirmation transaction (of every
    payment whose booking may be an offer: most bookings are none and change nothing here).
    None stays None: an entry names a booking as its offer only in the transaction that
    creates that booking (`hold_for_entry`, `resale_offers._hold_for`), and is never pointed
    at another existing booking later, so a confirmation that read under the booking's lock
    that no entry names it may skip this (`sell_held_booking(waitlist_offer=False)`)."""
    with connection.cursor() as cursor:
        cursor.execute(
            _MARK_OFFER_BOOKED_SQL,
            [
                WaitlistStatus.BOOKED,
                connection.ops.adapt_datetimefield_value(now),
                booking_id,
                WaitlistStatus.OFFERED,
            ],
        )
        return cursor.rowcount


# What `WaitlistEntry.objects.filter(offer_id=..., status=OFFERED).update(status=BOOKED,
# closed_at=...)` sends (tests/bookings/test_sale_statements.py), without compiling it again
# for every payment.
_MARK_OFFER_BOOKED_SQL = (
    f'UPDATE "{WaitlistEntry._meta.db_table}" SET "status" = %s, "closed_at" = %s '
    f'WHERE ("{WaitlistEntry._meta.db_table}"."offer_id" = %s '
    f'AND "{WaitlistEntry._meta.db_table}"."status" = %s)'
)
