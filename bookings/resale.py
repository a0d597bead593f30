"""Resale through the waitlist (issue 29, item 4; pretix/pretix#310): the engine's writes.

A customer who can no longer go lists some or all tickets of a confirmed booking at face
value (`list_for_resale`; bookings.resale_choice says which and what they cost).  The tickets
are offered to the waitlist with its own offer machinery (bookings.resale_offers): the first
waiting party of exactly their number that accepts the seats gets a hold (a HELD booking, paid
like any other).  Until a buyer pays, nothing of the seller's changes: their booking stays
CONFIRMED with its seats, its units stay sold, their tickets stay valid, and they may withdraw
the resale (`withdraw_resale`).

The offer hold has no seats and takes no units of its own (the units are still the
seller's), so two engine paths treat it apart, each by asking this module:
  - paid: `sell_held_booking` calls `hand_over` first, which in the buyer's confirmation
    transaction moves exactly the listed passengers' seats and units to the buyer, revokes
    exactly their tickets (the whole booking is closed when every ticket was listed, else
    it keeps the rest) and marks the resale SOLD (payments.resale then refunds the seller
    in the same transaction);
  - not paid (expired, given up, the sale closing): `close_bookings` calls
    `take_back_offers`, which leaves the inventory alone and offers the tickets to the next
    waiting party.

Lock order (docs/architecture.md, "Lock order"): booking rows before resale rows.  The buyer
locks the offer booking, then the resale, then the seller's booking; the seller locks their
booking, then the resale, then tries the offer booking with SKIP LOCKED, so the two never wait
on each other in a cycle: a withdrawal that finds the buyer paying is refused (ResaleBusy).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, router, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue, outbox_payloads, resale_choice
from bookings.errors import (
    BookingNotFound,
    InvalidBookingState,
    NotForResale,
    ResaleBusy,
    ResaleListed,
    SaleClosed,
)
from bookings.models import (
    ACTIVE_RESALE_STATUSES,
    Booking,
    BookingStatus,
    Passenger,
    Resale,
    ResaleStatus,
    Seat,
    SeatStatus,
    Ticket,
    TicketStatus,
    WaitlistEntry,
    WaitlistStatus,
)

# Offering to the waitlist has its own module; the engine asks `resale.` for its paths too.
from bookings.resale_offers import (  # noqa: F401
    offer_listed,
    offer_to_next_party,
    relist_after_close,
    take_back_offers,
)
from kernel.compiled import CompiledRead
from kernel.locking import lock_errors_as_too_busy, lock_seats
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType


@lock_errors_as_too_busy
def list_for_resale(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    fee_percent: Decimal = Decimal(0),
    ticket_ids: Sequence[int] | None = None,
) -> Resale:
    """List the chosen tickets (`ticket_ids`; None: all) of the customer's confirmed booking
    at face value, keeping `fee_percent` of it when sold, and offer them to the waitlist at
    once.  The booking's other tickets are not touched, now or when these sell."""
    now = timezone.now()
    with transaction.atomic():
        booking = _lock_own_booking(customer=customer, booking_id=booking_id)
        _check_resellable(booking, now=now)
        listed = resale_choice.chosen_passengers(booking=booking, ticket_ids=ticket_ids)
        face = resale_choice.face_value(booking=booking, listed=listed)
        fee = resale_choice.fee_on(face, fee_percent=fee_percent)
        try:
            with transaction.atomic():
                resale = Resale.objects.create(
                    sale_id=booking.sale_id,
                    booking=booking,
                    passenger_ids=[p.pk for p in listed],
                    face_value=face,
                    fee=fee,
                    currency=booking.currency,
                    listed_at=now,
                )
        except IntegrityError as exc:  # the booking's lock makes this a second request's
            raise ResaleListed() from exc
        _emit(OutboxEventType.RESALE_LISTED, resale)
        offer_to_next_party(resale, seller=booking, now=now)
    return resale


def _lock_own_booking(*, customer: AbstractBaseUser, booking_id: int) -> Booking:
    booking = (
        Booking.objects.select_for_update(of=("self",))
        .select_related("sale", *catalogue.owner_paths("sale__"))
        .filter(pk=booking_id, customer=customer)
        .first()
    )
    if booking is None:
        raise BookingNotFound()
    return booking


def _check_resellable(booking: Booking, *, now: datetime) -> None:
    if booking.status != BookingStatus.CONFIRMED:
        raise NotForResale(
            gettext("A %(status)s booking cannot be resold.")
            % {"status": str(booking.get_status_display()).lower()}
        )
    if not catalogue.is_open(booking.sale, now=now):
        raise SaleClosed(
            gettext("The sale has closed: these tickets can no longer be resold."),
            texts=catalogue.texts_of_sale(booking.sale_id),
        )
    if Resale.objects.filter(booking=booking, status__in=ACTIVE_RESALE_STATUSES).exists():
        raise ResaleListed()


@lock_errors_as_too_busy
def withdraw_resale(*, customer: AbstractBaseUser, booking_id: int) -> Resale:
    """The seller takes the tickets back before they sell.  An offer already made to the
    waitlist is cancelled and its party goes back to waiting, in its old place."""
    now = timezone.now()
    with transaction.atomic():
        booking = _lock_own_booking(customer=customer, booking_id=booking_id)
        resale = (
            Resale.objects.select_for_update(of=("self",))
            .filter(booking=booking, status__in=ACTIVE_RESALE_STATUSES)
            .first()
        )
        if resale is None:
            raise NotForResale(gettext("These tickets are not listed for resale."))
        if resale.offer_id is not None:
            _cancel_offer(resale, now=now)
        Resale.objects.filter(pk=resale.pk, status__in=ACTIVE_RESALE_STATUSES).update(
            status=ResaleStatus.WITHDRAWN, offer=None, closed_at=now
        )
        resale.status, resale.offer, resale.closed_at = ResaleStatus.WITHDRAWN, None, now
        _emit(OutboxEventType.RESALE_WITHDRAWN, resale)
    return resale


def lock_offer(offer_id: int) -> Booking | None:
    """The offer hold, locked, or None when a buyer's payment holds it right now.  Never
    waits: we hold the seller's booking and the resale, which the buyer locks after it."""
    return (
        Booking.objects.select_for_update(skip_locked=True)
        .filter(pk=offer_id, status=BookingStatus.HELD)
        .first()
    )


def _cancel_offer(resale: Resale, *, now: datetime) -> None:
    offer = lock_offer(resale.offer_id)
    if offer is None:
        if Booking.objects.filter(pk=resale.offer_id, status=BookingStatus.HELD).exists():
            raise ResaleBusy()
        return  # closed meanwhile (its close puts the resale back to LISTED)
    Booking.objects.filter(pk=offer.pk, status=BookingStatus.HELD).update(
        status=BookingStatus.CANCELLED, closed_at=now, updated_at=now
    )
    Passenger.objects.filter(booking=offer, is_live=True).update(is_live=False)
    # Not the party's doing: it waits again, in its old place (join order is its id).
    WaitlistEntry.objects.filter(offer=offer, status=WaitlistStatus.OFFERED).update(
        status=WaitlistStatus.WAITING, offer=None, offered_at=None
    )
    emit_event(
        sale_id=offer.sale_id,
        aggregate_type="booking",
        aggregate_id=offer.pk,
        event_type=OutboxEventType.BOOKING_CANCELLED,
        payload=outbox_payloads.booking_closed(offer, seats=()),
    )


def end_resales_of(booking_ids: list[int], *, now: datetime) -> int:
    """Confirmed bookings closing (an event called off): their resales end.  An offer hold
    already made keeps its link, so paying it is refused (`offer_still_for_sale`) and its
    close gives back no units."""
    return Resale.objects.filter(
        booking_id__in=booking_ids, status__in=ACTIVE_RESALE_STATUSES
    ).update(status=ResaleStatus.WITHDRAWN, closed_at=now)


def offer_still_for_sale(booking: Booking) -> bool:
    """False for a resale offer whose tickets are no longer for sale: paying it would buy
    nothing, so the money goes back (payments.outcomes).  True for any other booking."""
    status = offer_resale_status(booking)
    return status is None or status == ResaleStatus.OFFERED


def offer_resale_status(booking: Booking) -> str | None:
    """The status of the resale `booking` is the offer hold of; None when it is none.  None
    stays None: an offer's resale names it in the transaction that creates the offer
    (`bookings.resale_offers._hold_for`) and is never pointed at another booking later, so
    a sale that read None here may skip `hand_over`'s lock read (`sell_held_booking`)."""
    resale = _OFFER_RESALE_STATUS.first(offer_id=booking.pk)
    return None if resale is None else resale.status


# Compiled once per connection (kernel.compiled): every confirmation asks both, and nearly
# every booking is no resale offer, so the answer is nearly always "no row".
_OFFER_RESALE_STATUS = CompiledRead(
    Resale,
    lambda offer_id: Resale.objects.filter(offer_id=offer_id).only("status")[:1],
    offer_id=int,
)
_LOCKED_OFFER_RESALE = CompiledRead(
    Resale,
    lambda offer_id: Resale.objects.select_for_update(of=("self",)).filter(offer_id=offer_id)[:1],
    offer_id=int,
)


def hand_over(offer: Booking, *, now: datetime) -> Resale | None:
    """The buyer of a resale offer (its row lock held by the caller) pays: in this one
    transaction the resale is SOLD, the listed passengers' seats and units are the buyer's
    and exactly their tickets are revoked; the seller's booking keeps the rest (and what
    they cost), or is closed when every ticket was listed.  None when `offer` is no resale
    offer.

    The resale's conditional update is the guard: of two confirmations of one offer, or a
    confirmation and a withdrawal, exactly one wins (tests/payments/test_resale_races.py)."""
    resale = _LOCKED_OFFER_RESALE.first(using=router.db_for_write(Resale), offer_id=offer.pk)
    if resale is None:
        return None
    won = Resale.objects.filter(pk=resale.pk, status=ResaleStatus.OFFERED, offer=offer).update(
        status=ResaleStatus.SOLD, buyer_booking=offer, offer=None, closed_at=now
    )
    if not won:
        raise InvalidBookingState(gettext("These tickets are no longer for sale."))
    seller = Booking.objects.select_for_update(of=("self",)).get(pk=resale.booking_id)
    listed = resale.passenger_ids
    gone = Passenger.objects.filter(pk__in=listed, booking=seller, is_live=True).update(
        is_live=False
    )
    if gone != len(listed) or not _give_up_units(seller, resale=resale, now=now):
        raise InvalidBookingState(gettext("The seller's booking changed state concurrently."))
    seats = list(lock_seats(Seat.objects.filter(passengers__pk__in=listed)))
    Seat.objects.filter(pk__in=[s.pk for s in seats], status=SeatStatus.SOLD).update(booking=offer)
    for passenger, seat in zip(
        Passenger.objects.filter(booking=offer).order_by("id"), seats, strict=False
    ):
        Passenger.objects.filter(pk=passenger.pk).update(seat=seat)
    Ticket.objects.filter(passenger_id__in=listed, status=TicketStatus.VALID).update(
        status=TicketStatus.REVOKED, revoked_at=now
    )
    resale.status, resale.buyer_booking, resale.closed_at = ResaleStatus.SOLD, offer, now
    _emit(OutboxEventType.RESALE_SOLD, resale, seats=[s.seat_no for s in seats])
    return resale


def _give_up_units(seller: Booking, *, resale: Resale, now: datetime) -> bool:
    """The seller's confirmed booking gives the listed units (and what they cost) to the
    buyer: closed when they were all of it, else smaller.  The inventory's `sold` does not
    move, since the buyer's booking takes the units over.  False if it is not CONFIRMED."""
    live = Booking.objects.filter(pk=seller.pk, status=BookingStatus.CONFIRMED)
    units = len(resale.passenger_ids)
    if units >= seller.seat_count:
        return bool(live.update(status=BookingStatus.CANCELLED, closed_at=now, updated_at=now))
    return bool(
        live.update(
            seat_count=F("seat_count") - units,
            amount=F("amount") - resale.face_value,
            updated_at=now,
        )
    )


def _emit(event_type: OutboxEventType, resale: Resale, seats: Iterable[str] = ()) -> None:
    emit_event(
        sale_id=resale.sale_id,
        aggregate_type="booking",
        aggregate_id=resale.booking_id,
        event_type=event_type,
        payload=outbox_payloads.resale_changed(resale, seats=seats),
    )
