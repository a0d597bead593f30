"""Online check-in (not the gate's boarding scan, which is bookings.tickets.scan_ticket): the
customer checks the passengers of a confirmed booking in during the flight's window, naming
seats or letting them be assigned.  Rules (docs/departure.md):

- open from `online_checkin_window` (default 24 h before departure) up to its cut-off
  (default 45 min before), on a scheduled flight whose gate has not closed;
- a chosen seat must be free and of the booking's class;
- every passenger it checks in who sits in an exit row needs the exit-row conditions
  confirmed: by this request (`exit_row_confirmed`, recorded on every passenger checked in) or
  before, for that very seat (at the hold or when naming the passengers:
  `Passenger.seat_conditions_confirmed_at`; a seat change clears it); else 422
  `exit-row-not-confirmed` with the seats, and nothing changes;
- passengers without a chosen seat who have none are seated together (row adjacency of the
  cabin), outside the exit rows unless confirmed; if the cabin is full they stay seatless and
  get a seat at the gate, from a no-show (flights.departure);
- every passenger of the booking is recorded as checked in, once.

All of it is one transaction: a seat lost to another passenger (SeatUnavailable) undoes the
whole check-in, and the customer chooses again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.errors import BookingNotFound
from bookings.models import Booking, BookingStatus, Passenger
from bookings.seat_changes import rearrange_seats, seat_party
from flights.models import Flight, OnlineCheckIn
from flights.rules import (
    exit_rows_to_avoid,
    is_online_checkin_open,
    online_checkin_window,
    require_exit_row_confirmation,
)
from kernel.errors import DomainError, InvalidRequest


class OnlineCheckInClosed(DomainError):
    status = 409
    code = "online-check-in-closed"
    title = _("Online check-in is not open for this flight")


@dataclass(frozen=True)
class CheckInResult:
    booking_id: int
    seats: dict[int, str]  # passenger id -> seat ("" : seat at the gate)


def check_in_online(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    seat_choices: Mapping[int, str] | None = None,
    exit_row_confirmed: bool = False,
    reduced_mobility_ids: Collection[int] | None = None,
    now: datetime | None = None,
) -> CheckInResult:
    """`reduced_mobility_ids`: the passengers the customer declares as needing assistance
    (EU 261 Art. 11: never denied boarding); None leaves the declarations as they are."""
    now = now or timezone.now()
    seat_choices = dict(seat_choices or {})
    booking = Booking.objects.filter(
        pk=booking_id, customer=customer, status=BookingStatus.CONFIRMED
    ).first()
    flight = Flight.objects.filter(sale_id=booking.sale_id).first() if booking else None
    if flight is None:  # none of theirs, or not a flight (an event has no check-in)
        raise BookingNotFound()
    if not is_online_checkin_open(flight, now=now):
        opens, closes = online_checkin_window(flight)
        raise OnlineCheckInClosed(
            gettext("Online check-in for %(code)s is open from %(opens)s to %(closes)s UTC.")
            % {
                "code": flight.code,
                "opens": f"{opens:%Y-%m-%d %H:%M}",
                "closes": f"{closes:%Y-%m-%d %H:%M}",
            }
        )
    passengers = list(
        Passenger.objects.filter(booking=booking, is_live=True).select_related("seat")
    )
    passenger_ids = {p.pk for p in passengers}
    if not set(seat_choices) <= passenger_ids:
        raise InvalidRequest("A seat was chosen for someone not on this booking.", field="seat")
    if reduced_mobility_ids is not None and not set(reduced_mobility_ids) <= passenger_ids:
        raise InvalidRequest(gettext("Assistance was declared for someone not on this booking."))
    seats_after, confirmed_before = _seats_after(passengers, seat_choices)
    require_exit_row_confirmation(
        flight,
        seats_after,
        confirmed=exit_row_confirmed,
        confirmed_before=confirmed_before,
        at_check_in=True,
    )
    with transaction.atomic():
        if seat_choices:  # one atomic rearrangement: party members may trade seats
            rearrange_seats(booking_id=booking.pk, choices=seat_choices)
        seat_party(
            booking_id=booking.pk,
            passenger_ids=sorted(passenger_ids - set(seat_choices)),
            avoid_rows=exit_rows_to_avoid(flight, confirmed=exit_row_confirmed),
        )
        OnlineCheckIn.objects.bulk_create(
            [
                OnlineCheckIn(
                    flight=flight,
                    passenger_id=pk,
                    checked_in_at=now,
                    exit_row_confirmed=exit_row_confirmed,
                )
                for pk in sorted(passenger_ids)
            ],
            ignore_conflicts=True,  # checking in again (a seat change) keeps the first time
        )
        if exit_row_confirmed:  # for every seat the passengers have now (moves cleared theirs)
            Passenger.objects.filter(
                pk__in=passenger_ids, seat_conditions_confirmed_at__isnull=True
            ).update(seat_conditions_confirmed_at=now)
        if reduced_mobility_ids is not None:
            declared = set(reduced_mobility_ids)
            for flag in (True, False):
                OnlineCheckIn.objects.filter(
                    passenger_id__in=[pk for pk in passenger_ids if (pk in declared) == flag]
                ).update(reduced_mobility=flag)
        seats = dict(
            Passenger.objects.filter(pk__in=passenger_ids).values_list("pk", "seat__seat_no")
        )
    return CheckInResult(
        booking_id=booking.pk, seats={pk: seat or "" for pk, seat in seats.items()}
    )


def _seats_after(
    passengers: list[Passenger], seat_choices: Mapping[int, str]
) -> tuple[list[str], set[str]]:
    """The seats the passengers will have once seated as chosen (automatic seats for the
    seatless avoid exit rows unless the request confirms, so they need no look here), and
    those of them whose passenger's stored confirmation still stands: same seat, confirmed."""
    after: list[str] = []
    confirmed_before: set[str] = set()
    for passenger in passengers:
        current = passenger.seat.seat_no if passenger.seat else None
        seat_no = seat_choices.get(passenger.pk, current or "").strip().upper()
        if not seat_no:
            continue
        after.append(seat_no)
        if seat_no == current and passenger.seat_conditions_confirmed_at is not None:
            confirmed_before.add(seat_no)
    return after, confirmed_before
