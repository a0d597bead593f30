"""The catalogue's rules of time: is this flight still bookable, and when does its gate close?

Holding, paying, confirming, the seat picker, the waitlist and search all ask this one
function (or its queryset form), so "departed or cancelled" can never mean two things."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from django.db.models import Q

from bookings.errors import ExitRowNotConfirmed
from flights.models import Flight, FlightStatus


def is_bookable(flight: Flight, *, now: datetime) -> bool:
    """Scheduled (not cancelled, not marked departed), leaving after `now`, gate not closed
    (gate close settles every ticket sold: a sale after it would be nobody's to settle)."""
    return (
        flight.status == FlightStatus.SCHEDULED
        and flight.departure_at > now
        and flight.gate_closed_at is None
    )


def bookable_q(*, now: datetime, prefix: str = "") -> Q:
    """`is_bookable` as a filter; `prefix` reaches the flight through a relation ("flight__")."""
    return Q(
        **{
            f"{prefix}status": FlightStatus.SCHEDULED,
            f"{prefix}departure_at__gt": now,
            f"{prefix}gate_closed_at__isnull": True,
        }
    )


# When a flight's gate closes unless staff set its own time (Flight.gate_closes_at).
GATE_CLOSE_BEFORE_DEPARTURE = timedelta(minutes=20)


def gate_closes_at(flight: Flight) -> datetime:
    """The moment gate close is due: the flight's own time, or 20 minutes before departure."""
    return flight.gate_closes_at or flight.departure_at - GATE_CLOSE_BEFORE_DEPARTURE


def gate_close_due_q(*, now: datetime) -> Q:
    """`gate_closes_at(flight) <= now` as a filter on flights."""
    return Q(gate_closes_at__lte=now) | Q(
        gate_closes_at__isnull=True, departure_at__lte=now + GATE_CLOSE_BEFORE_DEPARTURE
    )


# Online check-in (not the gate's boarding scan): its window unless the flight sets its own.
ONLINE_CHECKIN_OPENS_BEFORE = timedelta(hours=24)
ONLINE_CHECKIN_CLOSES_BEFORE = timedelta(minutes=45)


def online_checkin_window(flight: Flight) -> tuple[datetime, datetime]:
    """When online check-in opens and when it closes (the cut-off)."""
    opens = flight.online_checkin_opens_at or flight.departure_at - ONLINE_CHECKIN_OPENS_BEFORE
    closes = flight.online_checkin_closes_at or flight.departure_at - ONLINE_CHECKIN_CLOSES_BEFORE
    return opens, closes


def is_online_checkin_open(flight: Flight, *, now: datetime) -> bool:
    """Open from its opening time up to (not including) the cut-off, on a scheduled flight
    whose gate has not closed."""
    opens, closes = online_checkin_window(flight)
    return (
        flight.status == FlightStatus.SCHEDULED
        and flight.gate_closed_at is None
        and opens <= now < closes
    )


def exit_row_seats(flight: Flight, seat_numbers: Iterable[str]) -> list[str]:
    """The seats of `seat_numbers` in the flight's emergency exit rows."""
    exit_rows = set(flight.exit_rows or ())
    return [s for s in seat_numbers if _row_of(s) in exit_rows]


def require_exit_row_confirmation(
    flight: Flight,
    seat_numbers: Iterable[str],
    *,
    confirmed: bool,
    confirmed_before: Collection[str] = (),
    at_check_in: bool = False,
) -> None:
    """THE exit-row rule: a passenger seated in an exit row needs its conditions confirmed,
    now (`confirmed`: the request itself confirms) or before, for that very seat
    (`confirmed_before`: seats whose passenger's stored confirmation still stands); else 422
    `exit-row-not-confirmed`, naming the seats.

    Where it is asked (through the catalogue's `require_seat_conditions` or directly): online
    check-in, API and page, for every passenger it checks in (`flights.online_checkin`); the
    seat picker's hold, which asks at once (`customer_holds.hold_chosen_seats`); and the gate's
    boarding scan (`bookings.tickets.scan_ticket`), the last chance: a passenger seated in an
    exit row by the gate itself (a no-show's seat) or who never checked in online is refused
    until the agent confirms the conditions with them.  An API hold may leave the
    confirmation for later: its answer says who still needs it.  Automatic seating asks
    `exit_rows_to_avoid` instead."""
    seats = [s for s in exit_row_seats(flight, seat_numbers) if s not in set(confirmed_before)]
    if seats and not confirmed:
        raise ExitRowNotConfirmed(seats, at_check_in=at_check_in)


def exit_rows_to_avoid(flight: Flight, *, confirmed: bool) -> tuple[int, ...]:
    """The same rule for a seat chosen by the system (online check-in's automatic seats, a
    denied passenger's seat passed on): the exit rows, unless the passenger confirmed their
    conditions (`Passenger.seat_conditions_confirmed_at`, or the request confirming now)."""
    return () if confirmed else tuple(flight.exit_rows or ())


def _row_of(seat_no: str) -> int | None:
    digits = "".join(ch for ch in seat_no if ch.isdigit())
    return int(digits) if digits else None
