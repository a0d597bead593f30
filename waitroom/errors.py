from kernel.errors import DomainError


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


class SaleNotFound(DomainError):
    status = 404
    code = "waiting-room-not-found"
    title = "No such waiting room"


class WaitingRoomRequired(DomainError):
    status = 403
    code = "waiting-room-required"
    title = "Please queue first"

    def __init__(self, *, sale_id: int, reason: str) -> None:
        super().__init__(
            f"This sale has a waiting room: {reason} Join the queue and you will be let in "
            "in turn.",
            queueUrl=f"/waiting-room/{sale_id}/",
            queueApiUrl=f"/api/waiting-rooms/{sale_id}/queue",
        )


class QueueUnavailable(DomainError):
    status = 503
    code = "waiting-room-unavailable"
    title = "Waiting room briefly unavailable"

    def __init__(self) -> None:
        super().__init__(
            "The queue cannot take new arrivals for a moment. Places already taken are kept; "
            "please try again shortly."
        )


class TooManyJoins(DomainError):
    status = 429
    code = "too-many-joins"
    title = "Too many attempts to join"

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            f"Too many attempts to join from this account or address. Your place, if you "
            f"have one, is kept. Try again in {retry_after} s.",
            retryAfter=retry_after,
        )


class NotInQueue(DomainError):
    status = 404
    code = "not-in-queue"
    title = "Not in this queue"


class NotBeyondHorizon(DomainError):
    status = 409
    code = "still-likely"
    title = "You are still likely to get a seat"
