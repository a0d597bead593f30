"""The waitlist of sold-out inventory classes: the engine's writes (reads are in
bookings.waitlist_selectors): the queue (join, leave) and the walk that turns freed units into
offers in join order; the offer hold itself and its end are bookings.waitlist_offers.

Freed units go to the waitlist **inside the transaction that frees them** (`offer_freed_units`
is called by every path that returns units: `close_bookings`, raising limits, unblocking a
seat), so there is no moment in which anyone else could grab them.

Policy when a party does not fit: *first fit in join order*.  Entries are visited in join
order and each one whose party fits what is free gets an offer; a larger party keeps its place
and is served as soon as enough units are free at once.  This never leaves a unit idle while
someone who could use it waits, and it is applied the same way on every path.

A party with seats fits only as one block side by side in one row, with no aisle between
(bookings.adjacency), in the sections it accepts and within its price ceiling per seat, chosen
by best available's single-seat rule (`waitlist_offers.best_seats`).  So the smaller party
behind may be served first, by this rule and no other: when the entry ahead finds no such block
among the freed seats, it keeps its place and the next entry in join order is tried with the
same seats.  Nobody behind is served while the entry ahead *does* fit, and nobody loses their
place.

An offer is a hold, so it keeps to the hold cap (MAX_HELD_UNITS_PER_CUSTOMER_PER_SALE), by
the hold path's own rule (`holding.may_offer_within_hold_cap`): an entry whose offer would
take its customer over the cap, or whose customer is holding on the sale at this very moment,
is skipped like a party that does not fit: it keeps its place, the units go to the next entry,
and it is offered again at the next release.  A party larger than the cap cannot join.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue, holding, resale, waitlist_offers
from bookings.errors import (
    AlreadyWaiting,
    FareClassNotFound,
    HoldLimitReached,
    NotSoldOut,
    NotWaiting,
)
from bookings.models import (
    ACTIVE_WAITLIST_STATUSES,
    Inventory,
    Seat,
    WaitlistEntry,
    WaitlistStatus,
)

# The offer hold and its end have their own module; the engine asks `waitlist.` for these.
from bookings.waitlist_offers import (  # noqa: F401
    close_offers,
    mark_offer_booked,
    offer_ttl,
)
from kernel.errors import InvalidRequest

# --- who may join: rules of the layers above, asked on every join ---------------------------


class JoinCheck(Protocol):
    def __call__(self, *, customer: AbstractBaseUser, sale_id: int, now: datetime) -> None:
        """Raise a DomainError to refuse `customer` a place on a waitlist of `sale_id`."""
        ...


_join_checks: dict[str, JoinCheck] = {}


def register_join_check(name: str, check: JoinCheck) -> None:
    """A layer above the engine adds a rule that every waitlist join passes, whichever door
    it came through (the waiting room: on a protected sale only people in its queue may
    wait).  Registered in that layer's AppConfig.ready(), by name, so a second ready() does
    not add it twice."""
    _join_checks[name] = check


def _check_may_join(*, customer: AbstractBaseUser, sale_id: int, now: datetime) -> None:
    for check in _join_checks.values():
        check(customer=customer, sale_id=sale_id, now=now)


def join_waitlist(
    *,
    customer: AbstractBaseUser,
    sale_id: int,
    fare_class: str,
    party_size: int,
    require_sold_out: bool = True,
    sections: Sequence[str] = (),
    max_seat_price: Decimal | None = None,
) -> WaitlistEntry:
    """`require_sold_out=False` is for the waiting room's "unlikely to get a seat" notice:
    units may be left, but all of them are spoken for by people ahead in the queue.

    A seated party may name the `sections` it accepts (empty: any) and `max_seat_price`, the
    most it pays per seat with the seat's surcharge (None: any); its offer is a block of
    seats side by side within both (`waitlist_offers.best_seats`)."""
    known = catalogue.known_class_codes()
    if known is not None and fare_class not in known:
        raise FareClassNotFound(f"Unknown fare class {fare_class!r}.")
    holding.check_party_size(party_size, field="partySize")
    cap = holding.hold_cap_of(customer)
    if cap is not None and party_size > cap:  # its offer could never be made
        raise HoldLimitReached(cap, texts=catalogue.texts_of_sale(sale_id))
    now = timezone.now()
    inventory = holding.open_inventory(sale_id=sale_id, fare_class=fare_class, now=now)
    # Once the sale and class are known to be real and open: a refusal here is about who asks.
    _check_may_join(customer=customer, sale_id=sale_id, now=now)
    sections = _check_seat_wishes(
        sale_id=sale_id,
        fare_class=fare_class,
        sections=sections,
        max_seat_price=max_seat_price,
        price=inventory.price,
    )
    if require_sold_out and inventory.available >= party_size:
        raise NotSoldOut(
            f"{inventory.available} seat(s) of {fare_class.title()} are available: "
            "book them directly."
        )
    try:
        with transaction.atomic():
            entry = WaitlistEntry.objects.create(
                sale_id=sale_id,
                fare_class=fare_class,
                customer=customer,
                party_size=party_size,
                sections=sections,
                max_seat_price=max_seat_price,
                joined_at=now,
            )
            # Tickets listed for resale while nobody of this size waited go to the newcomer.
            if resale.offer_listed(sale_id=sale_id, fare_class=fare_class, now=now):
                entry.refresh_from_db()
            return entry
    except IntegrityError as exc:
        raise AlreadyWaiting("You are already on this waitlist.") from exc


def _check_seat_wishes(
    *,
    sale_id: int,
    fare_class: str,
    sections: Sequence[str],
    max_seat_price: Decimal | None,
    price: Decimal,
) -> list[str]:
    """The entry's sections, each one the class has seats in; a ceiling no seat could meet
    is refused, since the entry could never be served."""
    wanted = sorted({str(s).strip() for s in sections if str(s).strip()})
    if wanted:
        known = set(
            Seat.objects.filter(sale_id=sale_id, fare_class=fare_class, section__in=wanted)
            .values_list("section", flat=True)
            .distinct()
        )
        if unknown := [s for s in wanted if s not in known]:
            raise InvalidRequest(
                gettext("No seats of this category in %(sections)s.")
                % {"sections": ", ".join(unknown)},
                field="sections",
            )
    if max_seat_price is not None and max_seat_price < price:
        raise InvalidRequest(
            gettext("The price ceiling is below the price of every seat (%(price)s).")
            % {"price": price},
            field="maxSeatPrice",
        )
    return wanted


def leave_waitlist(*, customer: AbstractBaseUser, sale_id: int, fare_class: str) -> WaitlistEntry:
    """Leave the queue.  An offer already made stays a normal hold the customer can pay or
    let lapse."""
    now = timezone.now()
    with transaction.atomic():
        entry = (
            WaitlistEntry.objects.select_for_update()
            .filter(
                sale_id=sale_id,
                fare_class=fare_class,
                customer=customer,
                status=WaitlistStatus.WAITING,
            )
            .first()
        )
        if entry is None:
            raise NotWaiting("You are not waiting on this waitlist.")
        WaitlistEntry.objects.filter(pk=entry.pk, status=WaitlistStatus.WAITING).update(
            status=WaitlistStatus.LEFT, closed_at=now
        )
        entry.status = WaitlistStatus.LEFT
    return entry


def offer_freed_units(*, sale_id: int, fare_class: str, now: datetime) -> list[WaitlistEntry]:
    """Turn free units of a fare class into holds for waiting customers, in join order.

    Must run inside the transaction that freed the units, after the inventory row was updated
    (so this transaction already holds that row's lock).  Entries and seats are claimed with
    SKIP LOCKED: we hold the inventory lock, and waiting on a row lock here could close a cycle
    with a hold that locked seats first.
    """
    entries = _claim_waiting_entries(sale_id=sale_id, fare_class=fare_class)
    if not entries:
        return []
    inventory = (
        Inventory.objects.select_for_update(of=("self",))
        .select_related("sale", *catalogue.owner_paths("sale__"))
        .get(sale_id=sale_id, fare_class=fare_class)
    )
    if not catalogue.is_open(inventory.sale, now=now):
        return []
    free = inventory.available
    offered = []
    for entry in entries:
        if free <= 0:
            break
        if entry.party_size > free:
            continue  # first fit: a larger party keeps its place for a bigger release
        if not holding.may_offer_within_hold_cap(
            customer_id=entry.customer_id, sale_id=sale_id, units=entry.party_size, now=now
        ):
            continue  # over the hold cap (or holding right now): keeps its place, next entry
        try:
            booking = waitlist_offers.hold_for_entry(entry, inventory, now)
        except waitlist_offers.NoBlock:
            continue  # no acceptable adjacent block for this party now: keeps its place
        if booking is None:
            break
        free -= entry.party_size
        offered.append(entry)
    return offered


def _claim_waiting_entries(*, sale_id: int, fare_class: str) -> list[WaitlistEntry]:
    """The waiting entries, in join order, row-locked until the release commits.

    The lock is what keeps an offer and a customer leaving from both winning: `leave_waitlist`
    locks the entry too, so either it leaves first (and is skipped here) or its offer is made
    first (and the leave finds it OFFERED).  tests/bookings/test_waitlist_concurrency.py
    shows the customer who was told they left getting an offer when this lock is taken away."""
    return list(
        WaitlistEntry.objects.select_for_update(skip_locked=True)
        .filter(sale_id=sale_id, fare_class=fare_class, status=WaitlistStatus.WAITING)
        .order_by("id")
    )


def has_waiting(*, sale_id: int, fare_class: str) -> bool:
    return WaitlistEntry.objects.filter(
        sale_id=sale_id, fare_class=fare_class, status=WaitlistStatus.WAITING
    ).exists()


def close_departed_waitlists(*, now: datetime | None = None) -> int:
    """Entries of departed or cancelled flights can never be served: close them."""
    now = now or timezone.now()
    with transaction.atomic():
        return (
            WaitlistEntry.objects.filter(status__in=ACTIVE_WAITLIST_STATUSES)
            .exclude(catalogue.open_sales_q(now=now, prefix="sale__"))
            .update(status=WaitlistStatus.CLOSED, closed_at=now)
        )
