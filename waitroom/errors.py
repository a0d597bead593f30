from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError


class RoomNotFound(DomainError):
    status = 404
    code = "waiting-room-not-found"
    title = _("No such waiting room")


class WaitingRoomRequired(DomainError):
    status = 403
    code = "waiting-room-required"
    title = _("Please queue first")

    def __init__(self, *, room_id: int, reason: str) -> None:
        super().__init__(
            gettext(
                "This sale has a waiting room: %(reason)s Join the queue and you will be let "
                "in in turn."
            )
            % {"reason": reason},
            queueUrl=f"/waiting-room/{room_id}/",
            queueApiUrl=f"/api/waiting-rooms/{room_id}/queue",
        )


class QueueUnavailable(DomainError):
    status = 503
    code = "waiting-room-unavailable"
    title = _("Waiting room briefly unavailable")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "The queue cannot take new arrivals for a moment. Places already taken are "
                "kept; please try again shortly."
            )
        )


class TooManyJoins(DomainError):
    status = 429
    code = "too-many-joins"
    title = _("Too many attempts to join")

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            gettext(
                "Too many attempts to join from this account or address. Your place, if you "
                "have one, is kept. Try again in %(seconds)d s."
            )
            % {"seconds": retry_after},
            retryAfter=retry_after,
        )


class NotInQueue(DomainError):
    status = 404
    code = "not-in-queue"
    title = _("Not in this queue")


class NotBeyondHorizon(DomainError):
    status = 409
    code = "still-likely"
    title = _("You are still likely to get a seat")
