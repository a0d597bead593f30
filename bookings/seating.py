"""Seats at the gate: a no-show's ticket is voided and their seat goes to a standby passenger.

At gate close (the catalogue decides when: flights.departure) every ticket of the sale that
has not been scanned at the gate is a no-show.  A passenger on standby is one with a seatless
unit (the overbooking margin, bookings.customer_holds.hold_seatless) whose ticket *has* been
scanned:
they reported at the gate and wait for a seat.  Each no-show is settled in one transaction:

1. the no-show's booking is locked, then one standby passenger's booking is *tried* (SKIP
   LOCKED: that lock would otherwise be taken out of the order in docs/architecture.md, "Lock
   order", against another settlement; a locked candidate is someone else's to seat);
2. the ticket goes VALID -> REVOKED by a conditional UPDATE.  A boarding scan at the same
   moment runs VALID -> USED on the same row, so exactly one of them wins: nobody is both
   boarded and a no-show;
3. only if this settlement won, the seat leaves the no-show (it becomes free for an instant
   inside the transaction) and `services.assign_seat` gives it to the standby passenger,
   whose ticket now names it.  Counters do not move: both units were already sold.

With no standby passenger the seat stays with the no-show (sold, empty): the unit is paid,
and the sale is over.

Standby priority, stated once (`standby_order`): the fare class (the catalogue's order of
cabins, then the booking class within the cabin, higher first), then the earliest online
check-in, then the time the passenger reported at the gate (the scan), then ticket id.  Only
passengers of the seat's own cabin are seated in it (`assign_seat` refuses a seat of another).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import (
    Case,
    DateTimeField,
    F,
    IntegerField,
    OrderBy,
    OuterRef,
    QuerySet,
    Subquery,
    Value,
    When,
)

from bookings import catalogue
from bookings.booking_class_models import BookingClass
from bookings.models import (
    Booking,
    BookingStatus,
    Passenger,
    Sale,
    Seat,
    SeatStatus,
    Ticket,
    TicketStatus,
)
from bookings.passengers import assign_seat
from kernel.locking import lock_errors_as_too_busy, lock_seats

# How many standby passengers a settlement tries before concluding nobody can take the seat
# now (each candidate it skips is being seated by a concurrent settlement).
CANDIDATES_TRIED = 20


@dataclass(frozen=True)
class NoShowSettlement:
    """What settling one ticket did.  `no_show` False: the ticket was boarded (or closed) in
    the meantime, and nothing changed."""

    ticket_id: int
    no_show: bool
    fare_class: str = ""
    seat_no: str = ""
    seated_ticket_id: int | None = None


def unboarded_tickets(*, sale_id: int) -> QuerySet[Ticket]:
    """The tickets gate close turns into no-shows: VALID (never scanned) on a CONFIRMED
    booking of the sale."""
    return Ticket.objects.filter(
        sale_id=sale_id, status=TicketStatus.VALID, booking__status=BookingStatus.CONFIRMED
    ).order_by("id")


def standby_order(*, sale: Sale, fare_classes: Sequence[str]) -> tuple[dict, list[OrderBy]]:
    """THE standby priority (docs/departure.md, "Standby priority"), as annotations and an
    ordering of passengers: (1) the cabin in the catalogue's order of classes (a flight's
    BUSINESS before ECONOMY); (2) within a cabin, the booking class: the cabin's own (full)
    fare first, then booking classes from the highest rank down; (3) the earliest check-in
    before the day (a flight's online check-in; never checked in: last); (4) the time they
    reported at the gate (their scan); (5) ticket id."""
    sells = catalogue.for_sale(sale)
    cabins = sells.class_codes or tuple(fare_classes)  # per-sale codes: the caller's order
    cabin_rank = Case(
        *(When(booking__fare_class=code, then=Value(i)) for i, code in enumerate(cabins)),
        default=Value(len(cabins)),
        output_field=IntegerField(),
    )
    booking_class_rank = Subquery(
        BookingClass.objects.filter(
            sale_id=sale.pk,
            fare_class=OuterRef("booking__fare_class"),
            code=OuterRef("booking__booking_class"),
        ).values("rank")[:1]
    )
    path = sells.checkin_time_path
    checked_in_at = F(path) if path else Value(None, output_field=DateTimeField())
    annotations = {
        "cabin_rank": cabin_rank,
        "booking_class_rank": booking_class_rank,
        "checked_in_before_day_at": checked_in_at,
    }
    order = [
        F("cabin_rank").asc(),
        F("booking_class_rank").desc(nulls_first=True),  # none: the cabin's own fare
        F("checked_in_before_day_at").asc(nulls_last=True),
        F("ticket__used_at").asc(),
        F("ticket__id").asc(),
    ]
    return annotations, order


def standby_queue(*, sale_id: int, fare_classes: Sequence[str]) -> QuerySet[Passenger]:
    """Passengers waiting for a seat, first served first (`standby_order`): live, seatless,
    on a CONFIRMED booking, their ticket scanned at the gate."""
    annotations, order = standby_order(sale=Sale.objects.get(pk=sale_id), fare_classes=fare_classes)
    return (
        Passenger.objects.filter(
            booking__sale_id=sale_id,
            booking__fare_class__in=list(fare_classes),
            booking__status=BookingStatus.CONFIRMED,
            is_live=True,
            seat__isnull=True,
            ticket__status=TicketStatus.USED,
        )
        .annotate(**annotations)
        .order_by(*order)
    )


@lock_errors_as_too_busy
def settle_no_show(*, ticket_id: int, now: datetime) -> NoShowSettlement:
    """Void one unboarded ticket as a no-show and give its seat to the first standby passenger
    of the same class (module docstring).  Idempotent: a ticket already boarded, voided or
    revoked reports `no_show=False` and changes nothing.  The caller may wrap this in its own
    transaction to record the no-show with it."""
    with transaction.atomic():
        ticket = Ticket.objects.select_related("passenger").filter(pk=ticket_id).first()
        if ticket is None or ticket.status != TicketStatus.VALID:
            return NoShowSettlement(ticket_id=ticket_id, no_show=False)
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=ticket.booking_id, status=BookingStatus.CONFIRMED)
            .first()
        )
        if booking is None:  # cancelled meanwhile: its tickets are revoked, not no-shows
            return NoShowSettlement(ticket_id=ticket_id, no_show=False)
        won = Ticket.objects.filter(pk=ticket.pk, status=TicketStatus.VALID).update(
            status=TicketStatus.REVOKED, revoked_at=now
        )
        if not won:  # boarded by a scan a moment ago
            return NoShowSettlement(ticket_id=ticket_id, no_show=False)
        seat_id = Passenger.objects.filter(pk=ticket.passenger_id).values_list("seat", flat=True)[0]
        if seat_id is None:
            return NoShowSettlement(
                ticket_id=ticket_id, no_show=True, fare_class=booking.fare_class
            )
        seated = _pass_seat_to_standby(booking=booking, passenger_id=ticket.passenger_id)
        seat_no = Seat.objects.filter(pk=seat_id).values_list("seat_no", flat=True)[0]
        return NoShowSettlement(
            ticket_id=ticket_id,
            no_show=True,
            fare_class=booking.fare_class,
            seat_no=seat_no,
            seated_ticket_id=seated,
        )


def _pass_seat_to_standby(*, booking: Booking, passenger_id: int) -> int | None:
    """The no-show passenger's seat to the first standby passenger whose booking this
    transaction can lock without waiting; returns that passenger's ticket id (None: nobody).
    The caller holds the no-show booking's lock."""
    for candidate in standby_queue(sale_id=booking.sale_id, fare_classes=[booking.fare_class])[
        :CANDIDATES_TRIED
    ]:
        locked = (
            Booking.objects.select_for_update(skip_locked=True)
            .filter(pk=candidate.booking_id, status=BookingStatus.CONFIRMED)
            .exists()
        )
        # Re-read under the lock: a settlement that held it may have seated them already.
        if (
            not locked
            or not Passenger.objects.filter(
                pk=candidate.pk, is_live=True, seat__isnull=True
            ).exists()
        ):
            continue
        seat = lock_seats(Seat.objects.filter(booking=booking, passengers__pk=passenger_id)).get()
        Passenger.objects.filter(pk=passenger_id).update(seat=None)
        Seat.objects.filter(pk=seat.pk, status=SeatStatus.SOLD).update(
            status=SeatStatus.AVAILABLE, booking=None, held_until=None
        )
        assign_seat(
            booking_id=candidate.booking_id, passenger_id=candidate.pk, seat_no=seat.seat_no
        )
        ticket_id = Ticket.objects.filter(passenger_id=candidate.pk).values_list("pk", flat=True)[0]
        Ticket.objects.filter(pk=ticket_id).update(seat_no=seat.seat_no)
        return ticket_id
    return None
