"""Reads for the online check-in page: the customer's flight booking, its passengers and
seats, whether the window is open, and who has checked in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser

from bookings.models import Booking, BookingStatus, Passenger
from flights.models import Flight, OnlineCheckIn
from flights.rules import is_online_checkin_open, online_checkin_window


@dataclass(frozen=True)
class CheckInPageState:
    booking: Booking
    flight: Flight
    passengers: list[Passenger]
    checked_in: dict[int, OnlineCheckIn]  # passenger id -> record
    opens_at: datetime
    closes_at: datetime
    is_open: bool

    @property
    def all_checked_in(self) -> bool:
        return all(p.pk in self.checked_in for p in self.passengers)


def check_in_page_state(
    *, customer: AbstractBaseUser, booking_id: int, now: datetime
) -> CheckInPageState | None:
    """None for a booking that is not the customer's confirmed flight booking."""
    booking = Booking.objects.filter(
        pk=booking_id, customer=customer, status=BookingStatus.CONFIRMED
    ).first()
    flight = (
        Flight.objects.select_related("origin", "destination")
        .filter(sale_id=booking.sale_id)
        .first()
        if booking
        else None
    )
    if flight is None:
        return None
    passengers = list(booking.passengers.filter(is_live=True).select_related("seat").order_by("id"))
    opens, closes = online_checkin_window(flight)
    return CheckInPageState(
        booking=booking,
        flight=flight,
        passengers=passengers,
        checked_in={
            c.passenger_id: c
            for c in OnlineCheckIn.objects.filter(passenger__in=[p.pk for p in passengers])
        },
        opens_at=opens,
        closes_at=closes,
        is_open=is_online_checkin_open(flight, now=now),
    )
