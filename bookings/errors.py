"""The sale engine's domain errors.  Each names the problem it is (RFC 9457 `type` slug), the
HTTP status the API answers with, and a human message that pages can show as is.  The base
class and the generic errors (invalid request, too busy, Idempotency-Key) are kernel.errors."""

from collections.abc import Iterable

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError


class FlightNotFound(DomainError):
    status = 404
    code = "flight-not-found"
    title = _("Flight not found")


class FareClassNotFound(DomainError):
    status = 400
    code = "fare-class-not-found"
    title = _("This flight does not sell that fare class")


class SeatNotFound(DomainError):
    status = 400
    code = "seat-not-found"
    title = _("Unknown seat")

    def __init__(self, seats: Iterable[str], detail: str | None = None) -> None:
        seats = sorted(seats)
        super().__init__(
            detail
            or gettext("No such seat on this flight: %(seats)s.") % {"seats": ", ".join(seats)},
            seats=seats,
        )


class SeatWrongCabin(DomainError):
    status = 400
    code = "seat-wrong-cabin"
    title = _("Seat is not in the chosen fare class")

    def __init__(self, seats: Iterable[str], fare_class: str) -> None:
        seats = sorted(seats)
        super().__init__(
            gettext("Seat %(seats)s is not sold in %(fare)s.")
            % {"seats": ", ".join(seats), "fare": fare_class},
            seats=seats,
        )


class FlightNotBookable(DomainError):
    status = 409
    code = "flight-not-bookable"
    title = _("This flight can no longer be booked")


class SeatUnavailable(DomainError):
    status = 409
    code = "seat-unavailable"
    title = _("Seat just taken")

    def __init__(self, seats: Iterable[str]) -> None:
        seats = sorted(seats)
        super().__init__(
            gettext("Seat %(seats)s was just taken by someone else. Please pick another.")
            % {"seats": ", ".join(seats)},
            seats=seats,
        )


class SoldOut(DomainError):
    status = 409
    code = "sold-out"
    title = _("Sold out")

    def __init__(self, fare_class: str) -> None:
        super().__init__(
            gettext("%(fare)s is sold out on this flight.") % {"fare": _fare_label(fare_class)},
            fareClass=fare_class,
        )


class HoldLimitReached(DomainError):
    status = 409
    code = "hold-limit-reached"
    title = _("Too many seats on hold")

    def __init__(self, limit: int) -> None:
        super().__init__(
            gettext(
                "You can hold at most %(limit)d seats on one flight at a time. Pay for or cancel "
                "a hold you have before holding more."
            )
            % {"limit": limit},
            limit=limit,
        )


class BookingNotFound(DomainError):
    status = 404
    code = "booking-not-found"
    title = _("Booking not found")


class HoldExpired(DomainError):
    status = 410
    code = "hold-expired"
    title = _("Hold expired")
    default = _("Your hold has expired and the seats were released. Please choose again.")

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.default)


class PassengerNamesMissing(DomainError):
    status = 422
    code = "passenger-names-missing"
    title = _("Passenger names missing")
    default = _(
        "Every passenger needs a full name before the booking can be paid: "
        "PUT /api/bookings/{id}/passengers with passengerNames, or fill them in on the hold page."
    )

    def __init__(self, detail: str | None = None, **extra: object) -> None:
        super().__init__(detail or self.default, **extra)


class InvalidBookingState(DomainError):
    status = 409
    code = "invalid-booking-state"
    title = _("The booking is not in a state that allows this")


class TicketNotFound(DomainError):
    status = 404
    code = "ticket-not-found"
    title = _("Ticket not found")


def _fare_label(fare_class: str) -> str:
    """ "ECONOMY" -> "Economy" in the active language (unknown codes title-cased as before)."""
    labels = {
        "ECONOMY": _("Economy"),
        "BUSINESS": _("Business"),
    }
    return str(labels.get(fare_class, fare_class.title()))
