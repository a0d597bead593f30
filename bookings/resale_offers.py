"""Resale through the waitlist (bookings.resale): offering listed tickets to the waiting
parties.  The first waiting party of exactly their number that accepts their seats and price
gets an offer hold (a HELD booking with no seats and no units of its own: they stay the
seller's until the buyer pays, `bookings.resale.hand_over`).  An offer hold that closes
unpaid lists its resale again, and the tickets go to the next party."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from bookings import catalogue, holding, outbox_payloads, waitlist
from bookings.models import (
    Booking,
    BookingStatus,
    Resale,
    ResaleStatus,
    Seat,
    WaitlistEntry,
    WaitlistStatus,
)
from kernel.outbox import emit_event
from kernel.outbox_types import OutboxEventType


def offer_listed(*, sale_id: int, fare_class: str, now: datetime) -> int:
    """Offer every listed (not yet offered) resale of the class to the waitlist, oldest
    first; returns how many were offered.  After a join and after an offer lapsed."""
    offered = 0
    for resale in (
        Resale.objects.select_for_update(of=("self",), skip_locked=True)
        .select_related("booking")
        .filter(
            status=ResaleStatus.LISTED,
            booking__sale_id=sale_id,
            booking__fare_class=fare_class,
            booking__status=BookingStatus.CONFIRMED,
        )
        .order_by("id")
    ):
        offered += offer_to_next_party(resale, seller=resale.booking, now=now) is not None
    return offered


def offer_to_next_party(resale: Resale, *, seller: Booking, now: datetime) -> Booking | None:
    """Hold the tickets for the first waiting entry, in join order, whose party is exactly
    their number and who accepts their seats and price; None if nobody fits yet."""
    if not catalogue.is_open(seller.sale, now=now):
        return None
    seats = _listed_seats(resale)
    units = len(resale.passenger_ids)
    per_seat = resale.face_value / units
    for entry in waitlist._claim_waiting_entries(
        sale_id=seller.sale_id, fare_class=seller.fare_class
    ):
        if entry.customer_id == seller.customer_id or entry.party_size != units:
            continue
        if not _accepts(entry, seats, per_seat) or not holding.may_offer_within_hold_cap(
            customer_id=entry.customer_id, sale_id=seller.sale_id, units=entry.party_size, now=now
        ):
            continue  # keeps its place, as a party the freed seats do not fit
        return _hold_for(resale, entry, seller=seller, seats=seats, now=now)
    return None


def _listed_seats(resale: Resale) -> list[Seat]:
    return list(
        Seat.objects.filter(
            passengers__pk__in=resale.passenger_ids, passengers__booking_id=resale.booking_id
        ).order_by("seat_no")
    )


def _accepts(entry: WaitlistEntry, seats: list[Seat], per_seat: Decimal) -> bool:
    if entry.sections and any(s.section not in entry.sections for s in seats):
        return False
    return entry.max_seat_price is None or per_seat <= entry.max_seat_price


def _hold_for(
    resale: Resale, entry: WaitlistEntry, *, seller: Booking, seats: list[Seat], now: datetime
) -> Booking:
    expires_at = now + waitlist.offer_ttl()
    # No units reserved: they stay the seller's sold units, and pass to the buyer on paying.
    offer = holding.create_held_booking(
        customer_id=entry.customer_id,
        sale_id=seller.sale_id,
        fare_class=seller.fare_class,
        booking_class=seller.booking_class,
        units=len(resale.passenger_ids),
        amount=resale.face_value,
        currency=resale.currency,
        expires_at=expires_at,
        now=now,
    )
    Resale.objects.filter(pk=resale.pk, status=ResaleStatus.LISTED).update(
        status=ResaleStatus.OFFERED, offer=offer
    )
    resale.status, resale.offer = ResaleStatus.OFFERED, offer
    WaitlistEntry.objects.filter(pk=entry.pk).update(
        status=WaitlistStatus.OFFERED, offer=offer, offered_at=now
    )
    emit_event(
        sale_id=offer.sale_id,
        aggregate_type="booking",
        aggregate_id=offer.pk,
        event_type=OutboxEventType.WAITLIST_OFFERED,
        payload=outbox_payloads.waitlist_offered(
            offer,
            customer_id=entry.customer_id,
            entry_id=entry.pk,
            party_size=entry.party_size,
            seats=[s.seat_no for s in seats],
            expires_at=expires_at,
        ),
    )
    return offer


# --- the engine's path that closes an unpaid offer hold -------------------------------------


def take_back_offers(bookings: Iterable[Booking]) -> set[int]:
    """Of HELD `bookings` closing unpaid (their locks held by the caller), the resale offers:
    their resales are listed again.  Returns their ids: they have no seats or units to give
    back.  The caller offers the tickets to the next party (`relist_after_close`)."""
    ids = [b.pk for b in bookings]
    resales = list(
        Resale.objects.select_for_update(of=("self",)).filter(offer_id__in=ids).order_by("id")
    )
    offers = {r.offer_id for r in resales}
    Resale.objects.filter(pk__in=[r.pk for r in resales], status=ResaleStatus.OFFERED).update(
        status=ResaleStatus.LISTED, offer=None
    )
    return offers


def relist_after_close(bookings: Iterable[Booking], *, offers: set[int], now: datetime) -> None:
    for sale_id, fare_class in sorted(
        {(b.sale_id, b.fare_class) for b in bookings if b.pk in offers}
    ):
        offer_listed(sale_id=sale_id, fare_class=fare_class, now=now)
