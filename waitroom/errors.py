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


class QueueClosed(DomainError):
    status = 409
    code = "queue-sold-out"
    title = _("Sold out")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "Every unit of this sale is sold, so the queue takes no new arrivals. People "
                "already in it keep their place and may join the waitlist."
            )
        )


class PresaleCodeInvalid(DomainError):
    status = 400
    code = "presale-code-invalid"
    title = _("Unknown presale code")

    def __init__(self) -> None:
        super().__init__(
            gettext("This presale code is not valid for this sale. Check it and try again."),
            field="presaleCode",
        )


class PresaleCodeUsedUp(DomainError):
    status = 409
    code = "presale-code-used-up"
    title = _("Presale code already used")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "This presale code has been used by another account. A code belongs to the "
                "account that redeems it first."
            ),
            field="presaleCode",
        )


class ProofOfWorkRequired(DomainError):
    status = 403
    code = "proof-of-work-required"
    title = _("Your browser's check is needed first")

    def __init__(self, *, room_id: int) -> None:
        super().__init__(
            gettext(
                "This queue asks every browser to solve a short calculation before joining "
                "(against ticket bots). Ask for a challenge, solve it and join with the answer."
            ),
            challengeUrl=f"/api/waiting-rooms/{room_id}/challenge",
        )


PROOF_REFUSALS = {
    "malformed": _("not an answer to a challenge"),
    "forged": _("not a challenge we issued"),
    "not yours": _("issued to another account or for another queue"),
    "expired": _("the challenge expired"),
    "wrong": _("the answer does not solve the challenge"),
    "used": _("the answer was used already"),
}


class ProofOfWorkInvalid(DomainError):
    status = 400
    code = "proof-of-work-invalid"
    title = _("The browser check did not pass")

    def __init__(self, reason: str) -> None:
        super().__init__(
            gettext(
                "The answer to the browser check is not valid (%(reason)s). Each answer works "
                "once, for your account and this queue, until it expires: ask for a new one."
            )
            % {"reason": PROOF_REFUSALS[reason]},
            reason=reason,
        )
