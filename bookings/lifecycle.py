"""How a booking ends or is sold: a hold expires, is given up or is paid for, a confirmed
booking is cancelled (payments.cancellation calls `close_bookings`).  Every path that returns
units calls `close_bookings`, which offers them to the waitlist in the same transaction.

Locks follow the one lock order in docs/architecture.md ("Lock order").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from functools import partial

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from bookings import availability, booking_classes, outbox_payloads, resale, seat_sale, waitlist
from bookings.errors import BookingNotFound, InvalidBookingState
from bookings.live import announce_seats_on_commit
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Passenger,
    Resale,
    Seat,
    SeatStatus,
)
from kernel import metrics
from kernel.compiled import CompiledRead
from kernel.locking import lock_errors_as_too_busy, lock_seats
from kernel.models import OutboxEvent
from kernel.outbox import emit_event, emit_events
from kernel.outbox_types import OutboxEventType


def close_bookings(
    bookings: Iterable[Booking],
    *,
    from_status: BookingStatus,
    to_status: BookingStatus,
    now: datetime,
) -> list[Booking]:
    """Move locked `bookings` from `from_status` to `to_status` and give their units back.

    The caller holds the booking row locks.  HELD bookings return `held` units, CONFIRMED
    ones return `sold` units; counters move by the booking's seat count (not by the seats
    still attached to it), so a seat taken over earlier never makes a counter drift.
    Returns the bookings that made the transition.
    """
    bookings = list(bookings)
    if not bookings:
        return []
    ids = [b.pk for b in bookings]
    _move_bookings(ids, from_status=from_status, to_status=to_status, now=now)
    released = _release_seats(bookings)
    Passenger.objects.filter(booking_id__in=ids, is_live=True).update(is_live=False)
    # A resale offer ending unpaid has no units of its own (they are still the seller's):
    # it gives none back, and the tickets go to the next party waiting (bookings.resale).
    offers = resale.take_back_offers(bookings) if from_status == BookingStatus.HELD else set()
    if from_status == BookingStatus.CONFIRMED:
        resale.end_resales_of(ids, now=now)
    units = _give_units_back(
        [b for b in bookings if b.pk not in offers],
        counter="held" if from_status == BookingStatus.HELD else "sold",
    )
    if from_status == BookingStatus.HELD:
        waitlist.close_offers(booking_ids=ids, now=now)
    # Freed units go to the waitlist before this transaction ends: nobody can grab them first.
    for sale_id, fare_class in sorted(units):
        waitlist.offer_freed_units(sale_id=sale_id, fare_class=fare_class, now=now)
    if offers:
        resale.relist_after_close(bookings, offers=offers, now=now)
    for b in bookings:
        b.status = to_status
    _emit_closed(bookings, to_status=to_status, released=released)
    return bookings


def _move_bookings(
    ids: list[int], *, from_status: BookingStatus, to_status: BookingStatus, now: datetime
) -> None:
    won = Booking.objects.filter(pk__in=ids, status=from_status).update(
        status=to_status, closed_at=now, updated_at=now
    )
    if won != len(ids):  # the caller's locks make this impossible; refuse to half-apply
        raise InvalidBookingState(
            gettext("%(count)s booking(s) changed state concurrently.") % {"count": len(ids) - won}
        )


def _release_seats(bookings: list[Booking]) -> dict[int, list[str]]:
    """Free the bookings' seats; returns the seat numbers each booking released."""
    ids = [b.pk for b in bookings]
    released = defaultdict(list)
    # Lock before updating, in the global seat order: an UPDATE alone would lock them in
    # physical order and deadlock against a hold locking the same seats (issue 11, item 4).
    for booking_id, seat_no in lock_seats(Seat.objects.filter(booking_id__in=ids)).values_list(
        "booking_id", "seat_no"
    ):
        released[booking_id].append(seat_no)
    Seat.objects.filter(booking_id__in=ids).update(
        status=SeatStatus.AVAILABLE, booking=None, held_until=None
    )
    by_sale: dict[int, list[str]] = defaultdict(list)
    for b in bookings:
        by_sale[b.sale_id].extend(released[b.pk])
    for sale_id, seat_nos in sorted(by_sale.items()):
        announce_seats_on_commit(sale_id=sale_id, seats=seat_nos, status=SeatStatus.AVAILABLE)
        availability.release_seats(sale_id=sale_id, seat_nos=seat_nos)
    return released


def _give_units_back(bookings: list[Booking], *, counter: str) -> dict[tuple[int, str], int]:
    """Return the bookings' units to the `counter` ("held" or "sold") they were taken from;
    returns the units given back per (sale, class)."""
    units: dict[tuple[int, str], int] = defaultdict(int)
    nested: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for b in bookings:
        units[(b.sale_id, b.fare_class)] += b.seat_count
        nested[(b.sale_id, b.fare_class)][b.booking_class] += b.seat_count
    for (sale_id, fare_class), n in sorted(units.items()):
        Inventory.objects.filter(sale_id=sale_id, fare_class=fare_class).update(
            **{counter: F(counter) - n}
        )
        # Under the row lock just taken, as the lock order in docs/architecture.md wants.
        for booking_class, m in sorted(nested[(sale_id, fare_class)].items()):
            booking_classes.move_class_counters(
                sale_id=sale_id, fare_class=fare_class, booking_class=booking_class, **{counter: -m}
            )
        availability.give_back(sale_id=sale_id, fare_class=fare_class, units=n)
    return units


def _emit_closed(
    bookings: list[Booking], *, to_status: BookingStatus, released: dict[int, list[str]]
) -> None:
    """`booking.<status>` for each booking, and `seats.released` for each that gave any back."""
    event_type = outbox_payloads.CLOSED_EVENT_TYPES[to_status]
    events = []
    for b in bookings:
        payload = outbox_payloads.booking_closed(b, seats=released[b.pk])
        events.append(
            OutboxEvent(
                sale_id=b.sale_id,
                aggregate_type="booking",
                aggregate_id=str(b.pk),
                event_type=event_type,
                payload=payload,
            )
        )
        if released[b.pk] or b.seat_count:
            events.append(
                OutboxEvent(
                    sale_id=b.sale_id,
                    aggregate_type="booking",
                    aggregate_id=str(b.pk),
                    event_type=OutboxEventType.SEATS_RELEASED,
                    payload=payload,
                )
            )
    emit_events(events)


@lock_errors_as_too_busy
def expire_holds(*, now: datetime | None = None, batch_size: int | None = None) -> int:
    """Expire every HELD booking past its deadline; returns how many this call expired.

    Batches claim rows with SKIP LOCKED, so two sweeps (or a sweep and a late payment) never
    wait on each other and never expire the same booking twice.  Each batch is one sale's
    (the sale of the oldest lapsed hold, read without a lock), so on a cluster distributed
    by sale every sweep transaction runs on one node (kernel/sharding.py); a sale whose
    batch came back short is done for this call, even if others' locks hid some of its rows.
    """
    batch_size = batch_size or settings.SEATKEEPER["EXPIRE_BATCH_SIZE"]
    expired = 0
    done: set[int] = set()
    while True:
        moment = now or timezone.now()
        lapsed = Booking.objects.filter(status=BookingStatus.HELD, expires_at__lte=moment)
        sale_id = (
            lapsed.exclude(sale_id__in=done)
            .order_by("id")
            .values_list("sale_id", flat=True)
            .first()
        )
        if sale_id is None:
            return expired
        with transaction.atomic():
            batch = list(
                lapsed.filter(sale_id=sale_id)
                .select_for_update(skip_locked=True)
                .only("id", "sale_id", "fare_class", "booking_class", "seat_count")
                .order_by("id")[:batch_size]
            )
            close_bookings(
                batch, from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=moment
            )
        expired += len(batch)
        if len(batch) < batch_size:
            done.add(sale_id)


@lock_errors_as_too_busy
def cancel_hold(*, customer: AbstractBaseUser, booking_id: int) -> Booking:
    """The customer gives up a HELD booking; its seats are free again at once."""
    now = timezone.now()
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update().filter(pk=booking_id, customer=customer).first()
        )
        if booking is None:
            raise BookingNotFound()
        booking.check_cancellable(
            statuses=(BookingStatus.HELD,),
            refused=gettext("A %(status)s booking cannot be given up as a hold."),
        )
        close_bookings(
            [booking], from_status=BookingStatus.HELD, to_status=BookingStatus.CANCELLED, now=now
        )
    return booking


# A sale's guarded updates (its seats': bookings.seat_sale), written as the ORM writes them
# (the querysets in tests/bookings/test_sale_statements.py compile to exactly these): every
# payment runs them, and compiling them was a tenth of a pay request's Python
# (docs/performance.md, "Issue 26: the pay request").  Datetimes go in as
# `connection.ops.adapt_datetimefield_value` makes them.
_CONFIRM_BOOKING_SQL = (
    f'UPDATE "{Booking._meta.db_table}" SET "status" = %s, "confirmed_at" = %s, '
    f'"updated_at" = %s WHERE ("{Booking._meta.db_table}"."id" = %s '
    f'AND "{Booking._meta.db_table}"."status" = %s)'
)
_HELD_TO_SOLD_SQL = (
    f'UPDATE "{Inventory._meta.db_table}" SET "held" = ("{Inventory._meta.db_table}"."held" - %s), '
    f'"sold" = ("{Inventory._meta.db_table}"."sold" + %s) '
    f'WHERE ("{Inventory._meta.db_table}"."fare_class" = %s '
    f'AND "{Inventory._meta.db_table}"."sale_id" = %s)'
)


def _execute(sql: str, params: list) -> int:
    """Rows `sql` changed, on the connection the ORM's update would have used."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def sell_held_booking(
    booking: Booking,
    *,
    now: datetime,
    payment: dict | None = None,
    resale_offer: bool = True,
    passengers: list[tuple[int, str, str | None, bool]] | None = None,
    waitlist_offer: bool = True,
) -> Resale | None:
    """HELD -> CONFIRMED for a booking whose row lock the caller holds: seats HELD -> SOLD,
    `held -= n, sold += n`, a paid waitlist offer marked booked, and `booking.confirmed` in
    the outbox — all in the caller's transaction.  Returns the resale a resale offer bought
    (now SOLD; its seller is refunded by the caller), None for any other booking.

    `payment` (paymentId, amount, currency) travels in the event for its consumers.
    `resale_offer=False`: the caller read, in this transaction and under the booking's lock,
    that no resale names it as its offer (`resale.offer_resale_status` None, which stays
    None), so the resale's lock read, which would find no row to lock, is not sent.
    `passengers`: the booking's passengers as `passengers_to_sell` read them in this
    transaction, under the booking's lock (which every change to them takes first), for a
    booking that is no resale offer (a resale's hand-over reseats them): not read again.
    `waitlist_offer=False`: the caller read, in this transaction and under the booking's
    lock, that no waitlist entry names it as its offer (None stays None,
    `waitlist.mark_offer_booked`), so the entry's UPDATE, which would change no row, is not
    sent.
    """
    when = connection.ops.adapt_datetimefield_value(now)
    won = _execute(
        _CONFIRM_BOOKING_SQL,
        [BookingStatus.CONFIRMED, when, when, booking.pk, BookingStatus.HELD],
    )
    if not won:  # the caller's booking lock makes this impossible
        raise InvalidBookingState(gettext("The booking changed state concurrently."))
    # A resale offer takes the seller's seats and sold units over instead (bookings.resale).
    resold = resale.hand_over(booking, now=now) if resale_offer else None
    seat_nos = seat_sale.sell_seats(booking)
    booking.status, booking.confirmed_at = BookingStatus.CONFIRMED, now
    # Who travels where: systems that read the event log (check-in) mirror it from here.
    if passengers is None or resale_offer:  # a resale's hand-over may have reseated them
        travelling = _PASSENGERS_SOLD.rows(booking_id=booking.pk)
    else:
        travelling = [(pk, name, seat_no) for pk, name, seat_no, _live in passengers]
    passengers_sold = [
        {"passengerId": pk, "fullName": name, "seat": seat_no} for pk, name, seat_no in travelling
    ]
    emit_event(
        sale_id=booking.sale_id,
        aggregate_type="booking",
        aggregate_id=booking.pk,
        event_type=OutboxEventType.BOOKING_CONFIRMED,
        payload=outbox_payloads.booking_confirmed(
            booking, seats=seat_nos, passengers=passengers_sold, payment=payment
        ),
    )
    # The hot fare-inventory row last (then the waitlist, after it in the lock order): every
    # hold and confirmation of the fare class waits for it, and it is held until COMMIT, so
    # the reads and the event above are not sent while holding it (docs/architecture.md,
    # "Lock order": the same locks in the same order, the inventory's taken later).
    if resold is None:
        _move_held_to_sold(booking)
    if waitlist_offer:
        waitlist.mark_offer_booked(booking_id=booking.pk, now=now)
    announce_seats_on_commit(sale_id=booking.sale_id, seats=seat_nos, status=SeatStatus.SOLD)
    # Counted once committed: a sale rolled back by the caller never happened.
    transaction.on_commit(partial(metrics.count, "sales", booking.seat_count), robust=True)
    return resold


# Compiled once per connection (kernel.compiled): who travels where for `booking.confirmed`
# (the seats' lock: bookings.seat_sale).  tests/bookings/test_sale_statements.py: it sends
# the ORM queryset's own SQL.
_PASSENGERS_SOLD = CompiledRead(
    Passenger,
    lambda booking_id: (
        Passenger.objects.filter(booking_id=booking_id)
        .order_by("id")
        .values_list("pk", "full_name", "seat__seat_no")
    ),
    booking_id=int,
)
# ...and the same rows with each passenger's `is_live`, for a caller that also checks the
# names under the booking's lock before selling (`passengers_to_sell`).
_PASSENGERS_TO_SELL = CompiledRead(
    Passenger,
    lambda booking_id: (
        Passenger.objects.filter(booking_id=booking_id)
        .order_by("id")
        .values_list("pk", "full_name", "seat__seat_no", "is_live")
    ),
    booking_id=int,
)


def passengers_to_sell(*, booking_id: int) -> list[tuple[int, str, str | None, bool]]:
    """Every passenger of a booking about to be sold, by id: (id, full name, seat number,
    live).  Read once under the booking's lock, it answers both questions of a confirmation:
    are the live ones named (`bookings.selectors.live_passengers_named`), and who travels
    where (`sell_held_booking(passengers=...)`)."""
    return _PASSENGERS_TO_SELL.rows(booking_id=booking_id)


def _move_held_to_sold(booking: Booking) -> None:
    n = booking.seat_count
    _execute(_HELD_TO_SOLD_SQL, [n, n, booking.fare_class, booking.sale_id])
    booking_classes.move_class_counters(
        sale_id=booking.sale_id,
        fare_class=booking.fare_class,
        booking_class=booking.booking_class,
        held=-booking.seat_count,
        sold=booking.seat_count,
    )
