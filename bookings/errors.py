"""The sale engine's domain errors.  Each names the problem it is (RFC 9457 `type` slug), the
HTTP status the API answers with, and a human message that pages can show as is.  The base
class and the generic errors (invalid request, too busy, Idempotency-Key) are kernel.errors."""

from collections.abc import Iterable

from kernel.errors import DomainError


class FlightNotFound(DomainError):
    status = 404
    code = "flight-not-found"
    title = "Flight not found"


class FareClassNotFound(DomainError):
    status = 400
    code = "fare-class-not-found"
    title = "This flight does not sell that fare class"


class SeatNotFound(DomainError):
    status = 400
    code = "seat-not-found"
    title = "Unknown seat"

    def __init__(self, seats: Iterable[str], detail: str | None = None) -> None:
        seats = sorted(seats)
        super().__init__(detail or f"No such seat on this flight: {', '.join(seats)}.", seats=seats)


class SeatWrongCabin(DomainError):
    status = 400
    code = "seat-wrong-cabin"
    title = "Seat is not in the chosen fare class"

    def __init__(self, seats: Iterable[str], fare_class: str) -> None:
        seats = sorted(seats)
        super().__init__(f"Seat {', '.join(seats)} is not sold in {fare_class}.", seats=seats)


class FlightNotBookable(DomainError):
    status = 409
    code = "flight-not-bookable"
    title = "This flight can no longer be booked"


class SeatUnavailable(DomainError):
    status = 409
    code = "seat-unavailable"
    title = "Seat just taken"

    def __init__(self, seats: Iterable[str]) -> None:
        seats = sorted(seats)
        super().__init__(
            f"Seat {', '.join(seats)} was just taken by someone else. Please pick another.",
            seats=seats,
        )


class SoldOut(DomainError):
    status = 409
    code = "sold-out"
    title = "Sold out"

    def __init__(self, fare_class: str) -> None:
        super().__init__(f"{fare_class.title()} is sold out on this flight.", fareClass=fare_class)


class HoldLimitReached(DomainError):
    status = 409
    code = "hold-limit-reached"
    title = "Too many seats on hold"

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"You can hold at most {limit} seats on one flight at a time. Pay for or cancel "
            "a hold you have before holding more.",
            limit=limit,
        )


class BookingNotFound(DomainError):
    status = 404
    code = "booking-not-found"
    title = "Booking not found"


class HoldExpired(DomainError):
    status = 410
    code = "hold-expired"
    title = "Hold expired"
    default = "Your hold has expired and the seats were released. Please choose again."

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.default)


class PassengerNamesMissing(DomainError):
    status = 422
    code = "passenger-names-missing"
    title = "Passenger names missing"
    default = (
        "Every passenger needs a full name before the booking can be paid: "
        "PUT /api/bookings/{id}/passengers with passengerNames, or fill them in on the hold page."
    )

    def __init__(self, detail: str | None = None, **extra: object) -> None:
        super().__init__(detail or self.default, **extra)


class InvalidBookingState(DomainError):
    status = 409
    code = "invalid-booking-state"
    title = "The booking is not in a state that allows this"


class TicketNotFound(DomainError):
    status = 404
    code = "ticket-not-found"
    title = "Ticket not found"
