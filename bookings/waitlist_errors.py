"""The domain errors of the waitlist and of resale through it (bookings.waitlist,
bookings.resale), beside the engine's others in bookings.errors, which re-exports them."""

from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError

# --- the waitlist ---------------------------------------------------------------------------


class NotSoldOut(DomainError):
    status = 409
    code = "not-sold-out"
    title = _("Seats are available")


class AlreadyWaiting(DomainError):
    status = 409
    code = "already-on-waitlist"
    title = _("Already on the waitlist")


class NotWaiting(DomainError):
    status = 404
    code = "not-on-waitlist"
    title = _("Not on the waitlist")


# --- resale through the waitlist (bookings.resale) -------------------------------------------


class NotForResale(DomainError):
    status = 409
    code = "not-for-resale"
    title = _("These tickets cannot be resold")


class ResaleNotFound(DomainError):
    status = 404
    code = "resale-not-found"
    title = _("These tickets were never listed for resale")


class ResaleListed(DomainError):
    status = 409
    code = "resale-already-listed"
    title = _("Already listed for resale")
    default = _("These tickets are already listed for resale.")

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.default)


class ResaleBusy(DomainError):
    status = 409
    code = "resale-being-bought"
    title = _("Someone is buying these tickets right now")
    default = _(
        "Someone on the waitlist is paying for these tickets right now. Try again in a minute: "
        "if they were sold, you will be refunded."
    )

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.default)


class NotYourTickets(DomainError):
    """A resale that names tickets this booking does not have (or none at all): bad input."""

    status = 400
    code = "tickets-not-in-booking"
    title = _("Not tickets of this booking")
