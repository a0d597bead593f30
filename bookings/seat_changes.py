"""Seat changes of sold bookings: a passenger moves to a free seat, or seatless passengers are
given seats that keep a party together.  Counters never move (the units are sold already);
only seats change hands, each claimed by a conditional UPDATE (AVAILABLE -> SOLD), so two
passengers choosing the same seat at once cannot both get it.

Locks: the booking, then the seats in the global seat order (docs/architecture.md, "Lock
order"); `assign_seat` (a seatless passenger's first seat) takes the same two.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from django.db import transaction
from django.utils.translation import gettext

from bookings import adjacency, availability, catalogue
from bookings.errors import (
    BookingNotFound,
    SeatBlocked,
    SeatNotFound,
    SeatUnavailable,
    SeatWrongCabin,
)
from bookings.live import announce_seats_on_commit
from bookings.models import Booking, BookingStatus, Passenger, Seat, SeatStatus, Ticket
from bookings.passengers import assign_seat
from kernel.errors import InvalidRequest
from kernel.locking import lock_errors_as_too_busy, lock_seats


@lock_errors_as_too_busy
def move_passenger(*, booking_id: int, passenger_id: int, seat_no: str) -> str:
    """Seat a live passenger of a CONFIRMED booking in `seat_no` (free, same class); their old
    seat, if any, is free again in the same transaction.  Returns the seat number."""
    return rearrange_seats(booking_id=booking_id, choices={passenger_id: seat_no})[passenger_id]


@lock_errors_as_too_busy
def rearrange_seats(*, booking_id: int, choices: Mapping[int, str]) -> dict[int, str]:
    """Seat passengers of one CONFIRMED booking as `choices` says (passenger id -> seat), in
    one transaction: the atomic swap.  A chosen seat must be free, or be vacated by another
    passenger of the same rearrangement (two passengers trading seats); every seat let go and
    not taken again is free afterwards.  A seat lost to someone else meanwhile
    (SeatUnavailable) undoes all of it.  Returns passenger id -> seat."""
    wanted = {pk: seat_no.strip().upper() for pk, seat_no in choices.items()}
    if len(set(wanted.values())) != len(wanted):
        raise InvalidRequest(gettext("Two passengers cannot share one seat."), field="seat")
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=booking_id, status=BookingStatus.CONFIRMED)
            .first()
        )
        if booking is None:
            raise BookingNotFound(gettext("No confirmed booking with that id."))
        passengers = list(booking.passengers.filter(pk__in=list(wanted), is_live=True))
        if len(passengers) != len(wanted):
            raise InvalidRequest(gettext("That passenger is not on this booking."), field="seat")
        old_ids = {p.seat_id for p in passengers if p.seat_id is not None}
        seats = list(
            lock_seats(
                Seat.objects.filter(sale_id=booking.sale_id, seat_no__in=list(wanted.values()))
                | Seat.objects.filter(pk__in=old_ids)
            )
        )
        by_no = {s.seat_no: s for s in seats}
        to_claim = []
        for seat_no in wanted.values():
            seat = by_no.get(seat_no)
            _check_seat(seat, seat_no, booking)
            if seat.pk in old_ids:
                continue  # vacated by this rearrangement: it stays the booking's
            to_claim.append(seat.pk)
        taken = sorted(s.seat_no for s in seats if s.pk in to_claim and not _free(s))
        if taken:
            raise SeatUnavailable(taken)
        # The condition guards what the lock already decided (and a caller who forgot it).
        claimed = Seat.objects.filter(pk__in=to_claim, status=SeatStatus.AVAILABLE).update(
            status=SeatStatus.SOLD, booking=booking, held_until=None
        )
        if claimed != len(to_claim):
            raise SeatUnavailable(sorted(wanted.values()))
        # A confirmation of a seat's conditions (an exit row) is for that seat: whoever moves
        # has confirmed nothing about the new one (moving out of an exit row, it no longer
        # matters).  Online check-in asks again, or records the confirmation it is given.
        moved = [p.pk for p in passengers if p.seat_id != by_no[wanted[p.pk]].pk]
        Passenger.objects.filter(pk__in=moved).update(seat_conditions_confirmed_at=None)
        # Seats let go first: one live passenger per seat is a UNIQUE constraint.
        Passenger.objects.filter(pk__in=list(wanted)).update(seat=None)
        kept = {by_no[n].pk for n in wanted.values()}
        freed = [s for s in seats if s.pk in old_ids and s.pk not in kept]
        Seat.objects.filter(pk__in=[s.pk for s in freed], booking=booking).update(
            status=SeatStatus.AVAILABLE, booking=None, held_until=None
        )
        for passenger_id, seat_no in sorted(wanted.items()):
            Passenger.objects.filter(pk=passenger_id).update(seat=by_no[seat_no])
            _copy_seat_to_ticket(passenger_id, seat_no)
        announce_seats_on_commit(
            sale_id=booking.sale_id, seats=sorted(wanted.values()), status=SeatStatus.SOLD
        )
        if freed:
            freed_nos = sorted(s.seat_no for s in freed)
            announce_seats_on_commit(
                sale_id=booking.sale_id, seats=freed_nos, status=SeatStatus.AVAILABLE
            )
            availability.release_seats(sale_id=booking.sale_id, seat_nos=freed_nos)
    return wanted


def _free(seat: Seat) -> bool:
    return seat.status == SeatStatus.AVAILABLE


def _check_seat(seat: Seat | None, seat_no: str, booking: Booking) -> None:
    texts = catalogue.texts_of_sale(booking.sale_id)
    if seat is None:
        raise SeatNotFound([seat_no], texts=texts)
    if seat.fare_class != booking.fare_class:
        raise SeatWrongCabin([seat_no], booking.fare_class, texts=texts)
    if seat.status == SeatStatus.BLOCKED:
        raise SeatBlocked([seat_no], texts=texts)


def _copy_seat_to_ticket(passenger_id: int, seat_no: str) -> None:
    """The ticket names the seat (its signed code keeps what it said at issue: the gate checks
    the ticket row, not the seat printed in the code)."""
    Ticket.objects.filter(passenger_id=passenger_id).update(seat_no=seat_no)


def seats_together(
    free: Sequence[Seat], count: int, *, near_rows: Collection[int] = ()
) -> list[Seat]:
    """`count` seats from `free` that keep a party together: the row nearest the party's
    seated members (or the front) with `count` free seats side by side, else the row with the
    most free seats, then the next rows.  Pure: the caller claims them."""
    by_row: dict[int, list[Seat]] = {}
    for seat in sorted(free, key=lambda s: (s.row, s.place or 0, s.letter)):
        by_row.setdefault(seat.row, []).append(seat)

    def distance(row: int) -> tuple[int, int]:
        return (min((abs(row - r) for r in near_rows), default=0), row)

    rows = sorted(by_row, key=distance)
    for row in rows:  # side by side: one block of the row, no aisle between (bookings.adjacency)
        for block in adjacency.blocks(by_row[row], count):
            return block
    for row in rows:  # one row, not side by side
        if len(by_row[row]) >= count:
            return by_row[row][:count]
    chosen: list[Seat] = []
    for row in rows:  # the nearest rows
        chosen.extend(by_row[row][: count - len(chosen)])
        if len(chosen) == count:
            return chosen
    return chosen


@lock_errors_as_too_busy
def seat_party(
    *, booking_id: int, passenger_ids: Sequence[int], avoid_rows: Collection[int]
) -> dict[int, str]:
    """Give the booking's seatless passengers among `passenger_ids` seats together (not in
    `avoid_rows`: the exit rows, for passengers who have not confirmed the exit-row
    conditions).  Returns passenger id -> seat; a passenger left out found no free seat (the
    cabin is full: they get one at the gate, from a no-show)."""
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=booking_id, status=BookingStatus.CONFIRMED)
            .first()
        )
        if booking is None:
            raise BookingNotFound(gettext("No confirmed booking with that id."))
        passengers = list(
            booking.passengers.filter(pk__in=passenger_ids, is_live=True, seat__isnull=True)
        )
        if not passengers:
            return {}
        near = set(
            booking.passengers.filter(is_live=True, seat__isnull=False).values_list(
                "seat__row", flat=True
            )
        )
        free = list(
            Seat.objects.filter(
                sale_id=booking.sale_id,
                fare_class=booking.fare_class,
                status=SeatStatus.AVAILABLE,
            ).exclude(row__in=list(avoid_rows))
        )
        given: dict[int, str] = {}
        for passenger, seat in zip(
            passengers, seats_together(free, len(passengers), near_rows=near), strict=False
        ):
            try:
                with transaction.atomic():  # a seat taken meanwhile costs only that passenger
                    assign_seat(
                        booking_id=booking.pk, passenger_id=passenger.pk, seat_no=seat.seat_no
                    )
            except SeatUnavailable:
                continue
            _copy_seat_to_ticket(passenger.pk, seat.seat_no)
            given[passenger.pk] = seat.seat_no
        if given:
            announce_seats_on_commit(
                sale_id=booking.sale_id, seats=sorted(given.values()), status=SeatStatus.SOLD
            )
    return given


@lock_errors_as_too_busy
def release_seat(*, booking_id: int, passenger_id: int) -> str | None:
    """Free the seat of a live passenger of a CONFIRMED booking who will not use it (denied
    boarding): the unit stays sold, the seat is AVAILABLE for someone seatless.  Returns the
    seat number freed, or None (they had none)."""
    with transaction.atomic():
        booking = (
            Booking.objects.select_for_update()
            .filter(pk=booking_id, status=BookingStatus.CONFIRMED)
            .first()
        )
        if booking is None:
            raise BookingNotFound(gettext("No confirmed booking with that id."))
        passenger = booking.passengers.filter(pk=passenger_id, is_live=True).first()
        if passenger is None or passenger.seat_id is None:
            return None
        (seat,) = lock_seats(Seat.objects.filter(pk=passenger.seat_id))
        Passenger.objects.filter(pk=passenger.pk).update(seat=None)
        Seat.objects.filter(pk=seat.pk, booking=booking).update(
            status=SeatStatus.AVAILABLE, booking=None, held_until=None
        )
        announce_seats_on_commit(
            sale_id=booking.sale_id, seats=[seat.seat_no], status=SeatStatus.AVAILABLE
        )
        availability.release_seats(sale_id=booking.sale_id, seat_nos=[seat.seat_no])
    return seat.seat_no
