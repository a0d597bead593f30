from bookings.errors import DomainError


class NotSoldOut(DomainError):
    status = 409
    code = "not-sold-out"
    title = "Seats are available"


class AlreadyWaiting(DomainError):
    status = 409
    code = "already-on-waitlist"
    title = "Already on the waitlist"


class NotWaiting(DomainError):
    status = 404
    code = "not-on-waitlist"
    title = "Not on the waitlist"
