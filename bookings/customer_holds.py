"""A customer's holds: the only code that moves fare inventory and seats out of AVAILABLE at a
customer's request (a waitlist offer is the other hold path, bookings.waitlist).

Locks follow the one lock order in docs/architecture.md ("Lock order"); the takeover of an
expired hold, which needs a booking lock while holding seat locks, only *tries* it with
SKIP LOCKED, so it can never close a cycle.  The rules on the picked seats (free, of the
class, none stranded alone, that takeover) are bookings.seat_checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from bookings import availability, booking_classes, catalogue, one_statement_hold
from bookings.errors import FareClassNotFound, SeatNotFound, SeatsRequired, SoldOut
from bookings.holding import (
    check_hold_cap,
    check_party_size,
    check_sale_open,
    create_held_booking,
    hold_ttl,
    open_inventory,
    raise_missing_sale_or_class,
    reserve_units,
)
from bookings.live import announce_seats_on_commit
from bookings.models import Booking, Inventory, Seat, SeatStatus
from bookings.passengers import clean_passenger_names
from bookings.seat_checks import check_leaves_no_single_seat, check_seats_free
from kernel.errors import InvalidRequest
from kernel.locking import lock_errors_as_too_busy, lock_seats
from kernel.metrics import counts_holds

# --- validation --------------------------------------------------------------------------------


def check_fare_class(fare_class: str) -> str:
    known = catalogue.known_class_codes()
    if known is not None and fare_class not in known:
        raise FareClassNotFound(
            gettext("Unknown fare class %(class)r; expected one of %(values)s.")
            % {"class": fare_class, "values": ", ".join(sorted(known))}
        )
    return fare_class


def normalise_seat_numbers(seat_numbers: Sequence[str]) -> list[str]:
    normalised = [str(s).strip().upper() for s in seat_numbers]
    check_party_size(len(normalised))
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


# --- holding seats -----------------------------------------------------------------------------


def hold_chosen_seats(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    seat_numbers: Sequence[str],
    conditions_confirmed: bool,
    confirm_now: bool,
    passenger_names: Sequence[str] | None = None,
    booking_class: str = "",
) -> Booking:
    """The seats a customer picked, held: the door of the seat picker and of
    `POST /api/bookings`.  Seats that carry conditions (a flight's exit rows) are confirmed
    per passenger before check-in, not necessarily here: `conditions_confirmed` records the
    confirmation on the seated passengers now.  `confirm_now` (the seat picker, whose
    checkbox asks at once) refuses unconfirmed ones instead (422 `exit-row-not-confirmed`,
    nothing held), by the catalogue's one rule (`catalogue.require_seat_conditions`); the API
    holds them and its answer says who still needs the confirmation.  Then `hold_seats`.

    `hold_seats` itself is the engine's hold, for callers that choose no seat for a customer
    by hand (tests, benches, a rebooking) or apply their own seat rules."""
    seat_nos = normalise_seat_numbers(seat_numbers)
    if confirm_now and not conditions_confirmed:  # confirmed: no query on the hot path
        catalogue.require_seat_conditions(sale_id, seat_nos, confirmed=False)
    return hold_seats(
        customer=customer,
        sale_id=sale_id,
        fare_class=fare_class,
        seat_numbers=seat_nos,
        passenger_names=passenger_names,
        booking_class=booking_class,
        conditions_confirmed=conditions_confirmed,
    )


@counts_holds
@lock_errors_as_too_busy
def hold_seats(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    seat_numbers: Sequence[str],
    passenger_names: Sequence[str] | None = None,
    booking_class: str = "",
    conditions_confirmed: bool = False,
) -> Booking:
    """Hold all of `seat_numbers` for `customer` for the hold TTL, or none of them.

    `booking_class` names a class nested in the fare class (docs/fare-classes.md) whose price
    the hold pays and whose nested limits it counts against; blank: the fare class's own.
    `conditions_confirmed`: the customer confirmed the seats' conditions (exit rows), recorded
    on the passengers; without it they are asked at check-in."""
    seat_nos = normalise_seat_numbers(seat_numbers)
    booking_class = booking_class.strip().upper()
    names = clean_passenger_names(passenger_names, len(seat_nos))
    check_fare_class(fare_class)
    now = timezone.now()
    with (
        availability.hold_admission(
            sale_id=sale_id,
            fare_class=fare_class,
            units=len(seat_nos),
            seat_nos=seat_nos,
            booking_class=booking_class,
        ),
        transaction.atomic(),
    ):
        check_hold_cap(customer=customer, sale_id=sale_id, units=len(seat_nos), now=now)
        locked = _lock_requested_seats(sale_id=sale_id, fare_class=fare_class, seat_nos=seat_nos)
        seats = [s for s in locked if s.seat_no in seat_nos]
        check_sale_open(seats[0].sale, now)
        if seats[0].fare_price is None:
            raise_missing_sale_or_class(sale_id, fare_class)
        if seats[0].sale.keeps_no_single_seats:
            check_leaves_no_single_seat(locked, fare_class=fare_class, seat_nos=seat_nos, now=now)
        check_seats_free(seats, fare_class=fare_class, now=now, seat_nos=seat_nos)
        price = _class_price(sale_id, fare_class, booking_class, default=seats[0].fare_price)

        # The hot fare-inventory row is reserved last (see holding.reserve_units); everything
        # written before it is rolled back if it finds the fare class sold out.  (Only a
        # takeover above, rare, has already locked that row to give back the expired units.)
        booking = create_held_booking(
            customer_id=customer.pk,
            sale_id=sale_id,
            fare_class=fare_class,
            units=len(seats),
            booking_class=booking_class,
            seats=seats,
            names=names,
            amount=price * len(seats) + sum((s.surcharge for s in seats), Decimal(0)),
            currency=seats[0].fare_currency,
            expires_at=now + hold_ttl(),
            now=now,
            conditions_confirmed=conditions_confirmed,
        )
        if not reserve_units(
            sale_id=sale_id, fare_class=fare_class, units=len(seats), booking_class=booking_class
        ):
            raise SoldOut(fare_class, texts=catalogue.for_sale(seats[0].sale).texts)
        announce_seats_on_commit(sale_id=sale_id, seats=seat_nos, status=SeatStatus.HELD)
    booking.sale = seats[0].sale  # read with its catalogue item above: the answer needs both
    return booking


def _class_price(sale_id: int, fare_class: str, booking_class: str, *, default: Decimal) -> Decimal:
    """What one unit costs: the booking class's price, or the fare class's own (`default`)."""
    if not booking_class:
        return default
    return booking_classes.price_of(
        sale_id=sale_id, fare_class=fare_class, booking_class=booking_class
    )


def _lock_requested_seats(*, sale_id: int, fare_class: str, seat_nos: list[str]) -> list[Seat]:
    """The requested seats, row-locked in the lock order (docs/architecture.md), each with
    its sale (and catalogue item) and the fare class's price; SeatNotFound (or a missing
    sale) if any is not there.  Where the sale keeps the single-seat rule, the **whole rows**
    of those seats, in the same statement and order: whether a pick strands a seat depends
    on its neighbours, which a concurrent hold may be taking."""
    fare = Inventory.objects.filter(sale_id=OuterRef("sale_id"), fare_class=fare_class)
    their_rows = (
        Seat.objects.filter(sale_id=sale_id, seat_no__in=seat_nos)
        .exclude(row_key="")
        .values("row_key")
    )
    seats = list(
        lock_seats(
            Seat.objects.select_related("sale", *catalogue.owner_paths("sale__"))
            .filter(sale_id=sale_id)
            .filter(
                Q(seat_no__in=seat_nos)
                | Q(sale__keeps_no_single_seats=True, row_key__in=Subquery(their_rows))
            )
            .annotate(
                fare_price=Subquery(fare.values("price")[:1]),
                fare_currency=Subquery(fare.values("currency")[:1]),
            )
        )
    )
    found = {s.seat_no for s in seats} & set(seat_nos)
    if len(found) != len(seat_nos):
        texts = catalogue.texts_of_sale(sale_id)
        if texts is None:
            raise_missing_sale_or_class(sale_id, fare_class)
        raise SeatNotFound(set(seat_nos) - found, texts=texts)
    return seats


# --- holding units without seats ---------------------------------------------------------------


@counts_holds
@lock_errors_as_too_busy
def hold_seatless(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    passengers: int,
    passenger_names: Sequence[str] | None = None,
    booking_class: str = "",
) -> Booking:
    """Hold `passengers` units of a fare class without seats (seats are assigned later).

    This is how the intentional overbooking margin is sold: the fare inventory allows
    `capacity + overbook_limit` units, only `capacity` of which have a physical seat.
    """
    check_party_size(passengers)
    booking_class = booking_class.strip().upper()
    names = clean_passenger_names(passenger_names, passengers)
    check_fare_class(fare_class)
    now = timezone.now()
    hold = {
        "customer": customer,
        "sale_id": sale_id,
        "fare_class": fare_class,
        "booking_class": booking_class,
        "passengers": passengers,
        "names": names,
        "now": now,
        "expires_at": now + hold_ttl(),
    }
    # The Redis filter goes first: a loser of a sold-out fare class costs no query at all.
    # It settles the counter when the body returns, that is once the hold has committed.
    with availability.hold_admission(
        sale_id=sale_id, fare_class=fare_class, units=passengers, booking_class=booking_class
    ):
        if one_statement_hold.applies():
            # PostgreSQL: one statement, its own transaction (bookings.one_statement_hold).
            return one_statement_hold.hold_units(**hold)
        # SQLite, or with HOLD_IN_ONE_STATEMENT off: the Python path, which the one statement
        # is proven to equal (tests/bookings/test_one_statement_hold.py).
        with transaction.atomic():
            return _hold_units(**hold)


def _hold_units(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    booking_class: str,
    passengers: int,
    names: list[str],
    now: datetime,
    expires_at: datetime,
) -> Booking:
    """The seatless hold's statements, inside the caller's transaction."""
    check_hold_cap(customer=customer, sale_id=sale_id, units=passengers, now=now)
    inventory = open_inventory(sale_id=sale_id, fare_class=fare_class, now=now)
    if not catalogue.sells_seatless(inventory.sale, fare_class):
        raise SeatsRequired(fare_class)
    price = _class_price(sale_id, fare_class, booking_class, default=inventory.price)
    booking = create_held_booking(
        customer_id=customer.pk,
        sale_id=sale_id,
        fare_class=fare_class,
        units=passengers,
        booking_class=booking_class,
        names=names,
        amount=price * passengers,
        currency=inventory.currency,
        expires_at=expires_at,
        now=now,
    )
    # Last: the hot row stays locked only for this UPDATE and the COMMIT.
    if not reserve_units(
        sale_id=sale_id, fare_class=fare_class, units=passengers, booking_class=booking_class
    ):
        raise SoldOut(fare_class, texts=catalogue.for_sale(inventory.sale).texts)
    booking.sale = inventory.sale  # read with its catalogue item above: the answer needs both
    return booking
