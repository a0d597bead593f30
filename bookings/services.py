"""Holds: the only code that moves fare inventory and seats out of AVAILABLE.

Locks follow the one lock order in docs/architecture.md ("Lock order"); the takeover of an
expired hold, which needs a booking lock while holding seat locks, only *tries* it with
SKIP LOCKED, so it can never close a cycle.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import F, OuterRef, Subquery, Sum
from django.utils import timezone
from django.utils.translation import gettext

from bookings import availability, catalogue, outbox_payloads, waitlist
from bookings.errors import (
    BookingNotFound,
    FareClassNotFound,
    FlightNotFound,
    HoldExpired,
    HoldLimitReached,
    InvalidBookingState,
    SaleNotBookable,
    SeatBlocked,
    SeatNotFound,
    SeatsRequired,
    SeatUnavailable,
    SeatWrongCabin,
    SoldOut,
)
from bookings.live import announce_seats_on_commit
from bookings.models import (
    Booking,
    BookingStatus,
    Inventory,
    Passenger,
    Sale,
    Seat,
    SeatStatus,
)
from bookings.selectors import acts_for_customers
from kernel import metrics
from kernel.errors import InvalidRequest
from kernel.locking import lock_errors_as_too_busy, lock_seats
from kernel.metrics import counts_holds
from kernel.models import OutboxEvent
from kernel.outbox import emit_event, emit_events
from kernel.outbox_types import OutboxEventType


def hold_ttl():
    return settings.SEATKEEPER["HOLD_TTL"]


def max_passengers() -> int:
    return settings.SEATKEEPER["MAX_PASSENGERS"]


# --- validation --------------------------------------------------------------------------------


def _check_fare_class(fare_class: str) -> str:
    known = catalogue.known_class_codes()
    if known is not None and fare_class not in known:
        raise FareClassNotFound(
            gettext("Unknown fare class %(class)r; expected one of %(values)s.")
            % {"class": fare_class, "values": ", ".join(sorted(known))}
        )
    return fare_class


def _check_party_size(count: int) -> None:
    if count < 1:
        raise InvalidRequest(gettext("Choose at least one seat or passenger."), field="seats")
    if count > max_passengers():
        raise InvalidRequest(
            gettext("At most %(passengers)s passengers can be booked together.")
            % {"passengers": max_passengers()},
            field="seats",
        )


def _normalise_seat_numbers(seat_numbers: Sequence[str]) -> list[str]:
    normalised = [str(s).strip().upper() for s in seat_numbers]
    _check_party_size(len(normalised))
    malformed = [s for s in normalised if not catalogue.is_seat_no(s)]
    if malformed:
        raise SeatNotFound(
            malformed,
            detail=gettext("Not a seat number: %(seats)s.") % {"seats": ", ".join(malformed)},
        )
    duplicates = sorted({s for s in normalised if normalised.count(s) > 1})
    if duplicates:
        raise InvalidRequest(
            gettext("Seat %(duplicates)s is listed more than once.")
            % {"duplicates": ", ".join(duplicates)},
            field="seats",
            seats=duplicates,
        )
    # Sorted as the lock order (docs/architecture.md) says: this is what makes {12A,12B}
    # racing {12B,12A} end in a clean loser instead of a deadlock.
    return sorted(normalised)


def _passenger_names(names: Sequence[str] | None, count: int) -> list[str]:
    if not names:
        return [""] * count
    if len(names) != count:
        raise InvalidRequest(
            gettext("Give one passenger name per seat (%(count)s), not %(count2)s.")
            % {"count": count, "count2": len(names)},
            field="passengers",
        )
    cleaned = [str(n).strip() for n in names]
    if any(len(n) > 120 for n in cleaned):
        raise InvalidRequest(
            gettext("A passenger name is at most 120 characters."), field="passengers"
        )
    if not all(is_printable_name(n) for n in cleaned):
        raise InvalidRequest(
            gettext("A passenger name cannot contain control characters."), field="passengers"
        )
    return cleaned


def is_printable_name(name: str) -> bool:
    """No NUL (PostgreSQL refuses it in text), no other control or unpaired surrogate
    characters (which cannot even be encoded): a name is printed on a boarding pass."""
    return all(unicodedata.category(ch) not in {"Cc", "Cs"} for ch in name)


def check_sale_open(sale: Sale, now: datetime) -> None:
    """SaleNotBookable unless the catalogue's rule (e.g. flights.rules.is_bookable), asked
    through the registry, says open; every path that starts a hold or a waitlist place asks
    here."""
    seller = catalogue.for_sale(sale)
    if not seller.is_open(sale, now=now):
        raise SaleNotBookable(seller.closed_detail(sale), texts=seller.texts)


def raise_missing_sale_or_class(sale_id: int, fare_class: str) -> None:
    texts = catalogue.texts_of_sale(sale_id)
    if texts is None:
        raise FlightNotFound(gettext("There is no sale %(id)s.") % {"id": sale_id})
    raise FareClassNotFound(
        str(texts.class_not_sold) % {"id": sale_id, "class": fare_class}, texts=texts
    )


# --- holds -------------------------------------------------------------------------------------


def _lock_customer_on_sale(*, customer_id: int, sale_id: int) -> None:
    """A transaction-scoped advisory lock for one customer on one sale; the first statement of
    every customer's hold, which also makes that hold's COMMIT asynchronous (see below)."""
    if connection.vendor != "postgresql":  # SQLite runs one writer at a time anyway
        return
    key = _hold_cap_lock_key(customer_id=customer_id, sale_id=sale_id)
    with connection.cursor() as cursor:
        if settings.SEATKEEPER["HOLD_SYNCHRONOUS_COMMIT"]:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])
        else:
            # A hold's COMMIT need not wait for the WAL flush: the fare row's lock, which every
            # hold of the class queues for, is then held ~2 ms instead of ~6 (pgbench on the
            # hot row, docs/performance.md "Asynchronous hold commits").  Safe because a hold is
            # not money and nothing can depend on it without a durable commit first: WAL is one
            # sequence, so the next synchronous COMMIT (its payment, a sale, any other write)
            # flushes the hold with it.  A PostgreSQL crash can forget only holds from its last
            # ~0.6 s (3 x wal_writer_delay) that nothing else has committed after; those seats
            # are simply free again, never sold twice.  Local to this transaction (is_local),
            # and in the same round trip as the lock.
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s), set_config('synchronous_commit', 'off', true)",
                [key],
            )


def _hold_cap_lock_key(*, customer_id: int, sale_id: int) -> int:
    name = f"hold-cap:{customer_id}:{sale_id}".encode()
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "big", signed=True)


def _try_lock_customer_on_sale(*, customer_id: int, sale_id: int) -> bool:
    """The same advisory lock, only tried (False: one of the customer's holds on this sale is
    running now).  For the waitlist's offers, which already hold the fare row's lock and so
    must never wait for a lock a hold takes first; their COMMIT stays synchronous (money may
    move in the same transaction: a cancellation with refund frees the units)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_try_advisory_xact_lock(%s)",
            [_hold_cap_lock_key(customer_id=customer_id, sale_id=sale_id)],
        )
        return bool(cursor.fetchone()[0])


def _hold_cap_exceeded(
    *, customer: AbstractBaseUser | int, sale_id: int, units: int, now: datetime
) -> int | None:
    """THE cap rule: the cap, if `units` more would give the customer more live held units on
    the sale than MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT; None if within it, or exempt (staff
    and travel agents hold for many people).  The caller holds the customer's advisory lock,
    so two of their holds (or a hold and an offer) count one after the other."""
    cap = settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT"]
    customer_id = customer if isinstance(customer, int) else customer.pk
    held = Booking.objects.filter(
        customer_id=customer_id, sale_id=sale_id, status=BookingStatus.HELD, expires_at__gt=now
    ).aggregate(units=Sum("seat_count"))["units"]
    if (held or 0) + units <= cap:
        return None
    # The permission is read only when it matters: two statements on the usual path.
    if isinstance(customer, int):
        customer = get_user_model().objects.get(pk=customer_id)
    return hold_cap_of(customer)


def hold_cap_of(customer: AbstractBaseUser) -> int | None:
    """The most live held units `customer` may have on one sale; None: no cap (staff and
    travel agents hold for many people)."""
    if acts_for_customers(customer):
        return None
    return settings.SEATKEEPER["MAX_HELD_UNITS_PER_CUSTOMER_PER_FLIGHT"]


def _check_hold_cap(*, customer: AbstractBaseUser, sale_id: int, units: int, now: datetime) -> None:
    """Refuse a hold that would give `customer` more than the cap of live held units on the
    flight.  Called first in the hold's transaction: the per customer and flight advisory lock
    is the first lock a hold takes (before seats and the fare row, so no cycle can form with
    them; only the same customer's holds on the same flight ever wait for it), and it makes two
    parallel holds by one customer count one after the other, so both cannot pass."""
    _lock_customer_on_sale(customer_id=customer.pk, sale_id=sale_id)
    cap = _hold_cap_exceeded(customer=customer, sale_id=sale_id, units=units, now=now)
    if cap is not None:
        raise HoldLimitReached(cap, texts=catalogue.texts_of_sale(sale_id))


def may_offer_within_hold_cap(*, customer_id: int, sale_id: int, units: int, now: datetime) -> bool:
    """Whether a waitlist offer of `units` keeps the customer within the hold cap: the same
    rule as a hold (`_hold_cap_exceeded`) under the same lock, only tried.  False when the
    customer is over it, or is holding on this sale right now (the offer goes to the next
    entry; this one keeps its place for the next release)."""
    if not _try_lock_customer_on_sale(customer_id=customer_id, sale_id=sale_id):
        return False
    return _hold_cap_exceeded(customer=customer_id, sale_id=sale_id, units=units, now=now) is None


def _reserve_units(*, sale_id: int, fare_class: str, units: int) -> bool:
    """Take `units` from the fare class in one conditional UPDATE; True if it won.

    The holds call this as the last statement before COMMIT.  Every hold of a fare class
    queues for this one row lock, so it is held for one round trip (this UPDATE) plus the
    COMMIT, never across the booking, passenger and seat writes, which need no lock anyone
    else waits for (new rows, and seat rows the hold already locked).  A loser (0 rows) rolls
    all of them back.  The price was read earlier without this lock, in the same
    transaction: a concurrent price change (set_fare_limits) either committed before that
    read or the hold is priced as if it came first.  Either is a price the fare class had
    while the customer asked, and the booking keeps its own `amount`, which is what is
    charged; no invariant ties it to the row's current price (capacity, the one that
    matters, is checked here, under the lock).
    """
    return bool(
        Inventory.objects.filter(
            sale_id=sale_id,
            fare_class=fare_class,
            held__lte=F("capacity") + F("overbook_limit") - F("sold") - units,
        ).update(held=F("held") + units)
    )


def create_held_booking(
    *,
    customer_id: int,
    sale_id: int,
    fare_class: str,
    units: int,
    seats: Sequence[Seat] = (),
    names: Sequence[str] = (),
    amount: Decimal,
    currency: str,
    expires_at: datetime,
    now: datetime,
) -> Booking:
    """The one place a HELD booking is written: the booking, its `seats` (row-locked by the
    caller) marked HELD for it, and one passenger per unit, seated first and in order.

    Every hold path calls this inside its transaction (a customer's hold, a seatless hold, a
    waitlist offer); taking the units from the fare inventory stays the caller's, since each
    path reserves them at a different point (docs/architecture.md, "Lock order")."""
    booking = Booking.objects.create(
        customer_id=customer_id,
        sale_id=sale_id,
        fare_class=fare_class,
        status=BookingStatus.HELD,
        seat_count=units,
        amount=amount,
        currency=currency,
        expires_at=expires_at,
        created_at=now,
        updated_at=now,
    )
    if seats:
        claimed = Seat.objects.filter(
            pk__in=[s.pk for s in seats], status=SeatStatus.AVAILABLE
        ).update(status=SeatStatus.HELD, booking=booking, held_until=expires_at)
        if claimed != len(seats):  # unreachable while the caller holds the seat locks
            raise SeatUnavailable([s.seat_no for s in seats])
    places = [*seats, *[None] * (units - len(seats))]
    full_names = [*names, *[""] * (units - len(names))]
    # The rows just written travel with the booking, so the answer to the hold is built
    # from them instead of being read back (bookings.selectors.booking_just_written).
    booking.written_passengers = Passenger.objects.bulk_create(
        Passenger(booking=booking, seat=seat, full_name=name)
        for seat, name in zip(places, full_names, strict=True)
    )
    return booking


@counts_holds
@lock_errors_as_too_busy
def hold_seats(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    seat_numbers: Sequence[str],
    passenger_names: Sequence[str] | None = None,
) -> Booking:
    """Hold all of `seat_numbers` for `customer` for the hold TTL, or none of them."""
    seat_nos = _normalise_seat_numbers(seat_numbers)
    names = _passenger_names(passenger_names, len(seat_nos))
    _check_fare_class(fare_class)
    now = timezone.now()
    expires_at = now + hold_ttl()

    fare = Inventory.objects.filter(sale_id=OuterRef("sale_id"), fare_class=fare_class)
    with (
        availability.hold_admission(
            sale_id=sale_id, fare_class=fare_class, units=len(seat_nos), seat_nos=seat_nos
        ),
        transaction.atomic(),
    ):
        _check_hold_cap(customer=customer, sale_id=sale_id, units=len(seat_nos), now=now)
        seats = list(
            lock_seats(
                Seat.objects.select_related("sale", *catalogue.owner_paths("sale__"))
                .filter(sale_id=sale_id, seat_no__in=seat_nos)
                .annotate(
                    fare_price=Subquery(fare.values("price")[:1]),
                    fare_currency=Subquery(fare.values("currency")[:1]),
                )
            )
        )
        if len(seats) != len(seat_nos):
            texts = catalogue.texts_of_sale(sale_id)
            if texts is None:
                raise_missing_sale_or_class(sale_id, fare_class)
            raise SeatNotFound(set(seat_nos) - {s.seat_no for s in seats}, texts=texts)
        check_sale_open(seats[0].sale, now)
        if seats[0].fare_price is None:
            raise_missing_sale_or_class(sale_id, fare_class)
        wrong_cabin = [s.seat_no for s in seats if s.fare_class != fare_class]
        if wrong_cabin:
            raise SeatWrongCabin(
                wrong_cabin, fare_class, texts=catalogue.for_sale(seats[0].sale).texts
            )

        stale_booking_ids = {
            s.booking_id for s in seats if s.status == SeatStatus.HELD and s.held_until <= now
        }
        taken = [
            s.seat_no
            for s in seats
            if s.status != SeatStatus.AVAILABLE and s.booking_id not in stale_booking_ids
        ]
        blocked = [s.seat_no for s in seats if s.status == SeatStatus.BLOCKED]
        if blocked:  # first: taken seats may come free again, a blocked one does not
            raise SeatBlocked(blocked, texts=catalogue.for_sale(seats[0].sale).texts)
        if taken:
            raise SeatUnavailable(taken)
        if stale_booking_ids:
            _take_over_expired_holds(stale_booking_ids, now=now, seat_nos=seat_nos)

        # The hot fare-inventory row is reserved last (see _reserve_units); everything
        # written before it is rolled back if it finds the fare class sold out.  (Only a
        # takeover above, rare, has already locked that row to give back the expired units.)
        booking = create_held_booking(
            customer_id=customer.pk,
            sale_id=sale_id,
            fare_class=fare_class,
            units=len(seats),
            seats=seats,
            names=names,
            amount=seats[0].fare_price * len(seats) + sum((s.surcharge for s in seats), Decimal(0)),
            currency=seats[0].fare_currency,
            expires_at=expires_at,
            now=now,
        )
        if not _reserve_units(sale_id=sale_id, fare_class=fare_class, units=len(seats)):
            raise SoldOut(fare_class, texts=catalogue.for_sale(seats[0].sale).texts)
        announce_seats_on_commit(sale_id=sale_id, seats=seat_nos, status=SeatStatus.HELD)
    booking.sale = seats[0].sale  # read with its catalogue item above: the answer needs both
    return booking


def _take_over_expired_holds(booking_ids: set[int], *, now: datetime, seat_nos: list[str]) -> None:
    # We already hold seat locks; waiting for a booking lock here could close a cycle with
    # the sweep or a late payment, which take the booking first (lock order,
    # docs/architecture.md).  So only try: if another transaction is closing that booking
    # right now, report the seat as taken for the moment.
    lockable = list(
        Booking.objects.select_for_update(skip_locked=True)
        .filter(pk__in=booking_ids, status=BookingStatus.HELD, expires_at__lte=now)
        .only("id", "sale_id", "fare_class", "seat_count")
        .order_by("id")
    )
    if len(lockable) != len(booking_ids):
        raise SeatUnavailable(seat_nos)
    # The stale bookings may own seats we did not ask for, some of them before ours in the
    # lock order: try those too rather than wait for them out of order.
    their_seats = Seat.objects.filter(booking_id__in=booking_ids)
    if len(lock_seats(their_seats, skip_locked=True)) != their_seats.count():
        raise SeatUnavailable(seat_nos)
    # Units freed by an expired hold belong to the waitlist first; the sweep will offer them.
    if any(waitlist.has_waiting(sale_id=b.sale_id, fare_class=b.fare_class) for b in lockable):
        raise SeatUnavailable(seat_nos)
    close_bookings(
        lockable, from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=now
    )


@counts_holds
@lock_errors_as_too_busy
def hold_seatless(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    passengers: int,
    passenger_names: Sequence[str] | None = None,
) -> Booking:
    """Hold `passengers` units of a fare class without seats (seats are assigned later).

    This is how the intentional overbooking margin is sold: the fare inventory allows
    `capacity + overbook_limit` units, only `capacity` of which have a physical seat.
    """
    _check_party_size(passengers)
    names = _passenger_names(passenger_names, passengers)
    _check_fare_class(fare_class)
    now = timezone.now()
    # The Redis filter goes first: a loser of a sold-out fare class costs no query at all.
    with availability.hold_admission(sale_id=sale_id, fare_class=fare_class, units=passengers):
        return _hold_units(
            customer=customer,
            sale_id=sale_id,
            fare_class=fare_class,
            passengers=passengers,
            names=names,
            now=now,
        )


def _hold_units(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    passengers: int,
    names: list[str],
    now: datetime,
) -> Booking:
    with transaction.atomic():
        _check_hold_cap(customer=customer, sale_id=sale_id, units=passengers, now=now)
        # A plain read (no row lock): the price and the sale's state, see _reserve_units.
        inventory = (
            Inventory.objects.select_related("sale", *catalogue.owner_paths("sale__"))
            .filter(sale_id=sale_id, fare_class=fare_class)
            .first()
        )
        if inventory is None:
            raise_missing_sale_or_class(sale_id, fare_class)
        check_sale_open(inventory.sale, now)
        if not catalogue.sells_seatless(inventory.sale, fare_class):
            raise SeatsRequired(fare_class)
        booking = create_held_booking(
            customer_id=customer.pk,
            sale_id=sale_id,
            fare_class=fare_class,
            units=passengers,
            names=names,
            amount=inventory.price * passengers,
            currency=inventory.currency,
            expires_at=now + hold_ttl(),
            now=now,
        )
        # Last: the hot row stays locked only for this UPDATE and the COMMIT.
        if not _reserve_units(sale_id=sale_id, fare_class=fare_class, units=passengers):
            raise SoldOut(fare_class, texts=catalogue.for_sale(inventory.sale).texts)
    booking.sale = inventory.sale  # read with its catalogue item above: the answer needs both
    return booking


# --- closing bookings --------------------------------------------------------------------------


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
    won = Booking.objects.filter(pk__in=ids, status=from_status).update(
        status=to_status, closed_at=now, updated_at=now
    )
    if won != len(ids):  # the caller's locks make this impossible; refuse to half-apply
        raise InvalidBookingState(
            gettext("%(count)s booking(s) changed state concurrently.") % {"count": len(ids) - won}
        )

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
    Passenger.objects.filter(booking_id__in=ids, is_live=True).update(is_live=False)

    counter = "held" if from_status == BookingStatus.HELD else "sold"
    units: dict[tuple[int, str], int] = defaultdict(int)
    for b in bookings:
        units[(b.sale_id, b.fare_class)] += b.seat_count
    for (sale_id, fare_class), n in sorted(units.items()):
        Inventory.objects.filter(sale_id=sale_id, fare_class=fare_class).update(
            **{counter: F(counter) - n}
        )
        availability.give_back(sale_id=sale_id, fare_class=fare_class, units=n)
    if from_status == BookingStatus.HELD:
        waitlist.close_offers(booking_ids=ids, now=now)
    # Freed units go to the waitlist before this transaction ends: nobody can grab them first.
    for sale_id, fare_class in sorted(units):
        waitlist.offer_freed_units(sale_id=sale_id, fare_class=fare_class, now=now)

    event_type = outbox_payloads.CLOSED_EVENT_TYPES[to_status]
    events = []
    for b in bookings:
        b.status = to_status
        payload = outbox_payloads.booking_closed(b, seats=released[b.pk])
        events.append(
            OutboxEvent(
                aggregate_type="booking",
                aggregate_id=str(b.pk),
                event_type=event_type,
                payload=payload,
            )
        )
        if released[b.pk] or b.seat_count:
            events.append(
                OutboxEvent(
                    aggregate_type="booking",
                    aggregate_id=str(b.pk),
                    event_type=OutboxEventType.SEATS_RELEASED,
                    payload=payload,
                )
            )
    emit_events(events)
    return bookings


@lock_errors_as_too_busy
def expire_holds(*, now: datetime | None = None, batch_size: int | None = None) -> int:
    """Expire every HELD booking past its deadline; returns how many this call expired.

    Batches claim rows with SKIP LOCKED, so two sweeps (or a sweep and a late payment) never
    wait on each other and never expire the same booking twice.
    """
    batch_size = batch_size or settings.SEATKEEPER["EXPIRE_BATCH_SIZE"]
    expired = 0
    while True:
        moment = now or timezone.now()
        with transaction.atomic():
            batch = list(
                Booking.objects.select_for_update(skip_locked=True)
                .filter(status=BookingStatus.HELD, expires_at__lte=moment)
                .only("id", "sale_id", "fare_class", "seat_count")
                .order_by("id")[:batch_size]
            )
            close_bookings(
                batch, from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=moment
            )
        expired += len(batch)
        if len(batch) < batch_size:
            return expired


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


def name_passengers(
    *, customer: AbstractBaseUser, booking_id: int, names: Sequence[str]
) -> Booking:
    """Give every passenger of the customer's HELD booking a name (seat order, then the order
    of seatless places), before it can be paid.  All names or none; each must be non-empty."""
    now = timezone.now()
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update().filter(pk=booking_id, customer=customer).first()
        )
        if booking is None:
            raise BookingNotFound()
        if booking.status == BookingStatus.EXPIRED or (
            booking.status == BookingStatus.HELD and booking.expires_at <= now
        ):
            raise HoldExpired()
        if booking.status != BookingStatus.HELD:
            raise InvalidBookingState(
                f"Names can be given only while the seats are held; this booking is "
                f"{booking.status.lower()}."
            )
        passengers = list(
            booking.passengers.order_by(F("seat__seat_no").asc(nulls_last=True), "id")
        )
        cleaned = _passenger_names(names, len(passengers))
        if not all(cleaned) or any(ch < " " or ch == "\x7f" for name in cleaned for ch in name):
            raise InvalidRequest(
                gettext("Enter the full name of every passenger (printable characters only)."),
                field="passengerNames",
            )
        for passenger, name in zip(passengers, cleaned, strict=True):
            passenger.full_name = name
        Passenger.objects.bulk_update(passengers, ["full_name"])
    return booking


@lock_errors_as_too_busy
def assign_seat(*, booking_id: int, passenger_id: int, seat_no: str) -> Passenger:
    """Give a seatless passenger (an overbooking unit) a seat that has come free.

    Counters do not move: the unit was already held or sold; only the seat changes hands.
    """
    seat_no = seat_no.strip().upper()
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=booking_id, status__in=[BookingStatus.HELD, BookingStatus.CONFIRMED])
            .first()
        )
        if booking is None:
            raise BookingNotFound(gettext("No live booking with that id."))
        passenger = booking.passengers.filter(pk=passenger_id, is_live=True).first()
        if passenger is None:
            raise InvalidRequest(
                gettext("That passenger is not on this booking."), field="passenger"
            )
        if passenger.seat_id is not None:
            raise InvalidBookingState(gettext("That passenger already has a seat."))
        seat = (
            Seat.objects.select_for_update()
            .filter(sale_id=booking.sale_id, seat_no=seat_no)
            .first()
        )
        if seat is None:
            raise SeatNotFound([seat_no], texts=catalogue.texts_of_sale(booking.sale_id))
        if seat.fare_class != booking.fare_class:
            raise SeatWrongCabin(
                [seat_no], booking.fare_class, texts=catalogue.texts_of_sale(booking.sale_id)
            )
        if seat.status == SeatStatus.BLOCKED:
            raise SeatBlocked([seat_no], texts=catalogue.texts_of_sale(booking.sale_id))
        held = booking.status == BookingStatus.HELD
        claimed = Seat.objects.filter(pk=seat.pk, status=SeatStatus.AVAILABLE).update(
            status=SeatStatus.HELD if held else SeatStatus.SOLD,
            booking=booking,
            held_until=booking.expires_at if held else None,
        )
        if not claimed:
            raise SeatUnavailable([seat_no])
        Passenger.objects.filter(pk=passenger.pk).update(seat=seat)
        passenger.seat = seat
    return passenger


def sell_held_booking(booking: Booking, *, now: datetime, payment: dict | None = None) -> list[str]:
    """HELD -> CONFIRMED for a booking whose row lock the caller holds: seats HELD -> SOLD,
    `held -= n, sold += n`, a paid waitlist offer marked booked, and `booking.confirmed` in
    the outbox — all in the caller's transaction.  Returns the seat numbers sold.

    `payment` (paymentId, amount, currency) travels in the event for its consumers.
    """
    won = Booking.objects.filter(pk=booking.pk, status=BookingStatus.HELD).update(
        status=BookingStatus.CONFIRMED, confirmed_at=now, updated_at=now
    )
    if not won:  # the caller's booking lock makes this impossible
        raise InvalidBookingState(gettext("The booking changed state concurrently."))
    seat_nos = list(
        lock_seats(Seat.objects.filter(booking_id=booking.pk)).values_list("seat_no", flat=True)
    )
    Seat.objects.filter(booking_id=booking.pk, status=SeatStatus.HELD).update(
        status=SeatStatus.SOLD, held_until=None
    )
    Inventory.objects.filter(sale_id=booking.sale_id, fare_class=booking.fare_class).update(
        held=F("held") - booking.seat_count, sold=F("sold") + booking.seat_count
    )
    waitlist.mark_offer_booked(booking_id=booking.pk, now=now)
    booking.status, booking.confirmed_at = BookingStatus.CONFIRMED, now
    # Who travels where: systems that read the event log (check-in) mirror it from here.
    passengers = [
        {"passengerId": pk, "fullName": name, "seat": seat_no}
        for pk, name, seat_no in Passenger.objects.filter(booking_id=booking.pk)
        .order_by("id")
        .values_list("pk", "full_name", "seat__seat_no")
    ]
    emit_event(
        aggregate_type="booking",
        aggregate_id=booking.pk,
        event_type=OutboxEventType.BOOKING_CONFIRMED,
        payload=outbox_payloads.booking_confirmed(
            booking, seats=seat_nos, passengers=passengers, payment=payment
        ),
    )
    announce_seats_on_commit(sale_id=booking.sale_id, seats=seat_nos, status=SeatStatus.SOLD)
    # Counted once committed: a sale rolled back by the caller never happened.
    transaction.on_commit(partial(metrics.count, "sales", booking.seat_count), robust=True)
    return seat_nos
