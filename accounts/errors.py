from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError

# Where a customer asks for a (new) verification link: the page, whichever door refused.
SEND_LINK_URL = "/accounts/verify-email/"


class EmailNotVerified(DomainError):
    """A door that lets in only verified addresses (a waiting room with
    `require_verified_email`) refused an account whose address is not verified."""

    status = 403
    code = "email-not-verified"
    title = _("Please verify your e-mail address first")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "This sale lets in only accounts with a verified e-mail address. Open the link "
                "we e-mailed you, or ask for a new one, then join again."
            ),
            sendLinkUrl=SEND_LINK_URL,
        )


class TooManySignups(DomainError):
    status = 429
    code = "too-many-signups"
    title = _("Too many new accounts from this address")

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            gettext(
                "Too many accounts were created from your network recently. Please try again "
                "in %(minutes)d min, or log in to an account you already have."
            )
            % {"minutes": max(1, round(retry_after / 60))},
            retryAfter=retry_after,
        )


class TooManyVerificationLinks(DomainError):
    status = 429
    code = "too-many-verification-links"
    title = _("Too many links asked for")

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            gettext(
                "We sent you several links already; the newest works. You can ask again in "
                "%(minutes)d min."
            )
            % {"minutes": max(1, round(retry_after / 60))},
            retryAfter=retry_after,
        )


class EmailTaken(DomainError):
    status = 409
    code = "email-taken"
    title = _("This e-mail address belongs to another account")


class VerificationLinkInvalid(DomainError):
    status = 400
    code = "verification-link-invalid"
    title = _("This link does not work any more")

    def __init__(self) -> None:
        super().__init__(
            gettext(
                "The link is wrong or too old. Log in and ask for a new one: the newest link "
                "always works."
            )
        )


class TooManyPasswordResets(DomainError):
    status = 429
    code = "too-many-password-resets"
    title = _("Too many password resets from this address")

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            gettext("Please try again in %(minutes)d min.")
            % {"minutes": max(1, round(retry_after / 60))},
            retryAfter=retry_after,
        )
