"""Domain errors every app shares.  Each names the problem it is (RFC 9457 `type` slug), the
HTTP status the API answers with, and a human message that pages can show as is.

The API (`config.api.exceptions`) and the pages turn any `DomainError` into problem+json or a
message; an app's own errors subclass it in that app's `errors.py`.

Titles are translated lazily (class attributes); details are written in the language active
where the error is raised (the request's, via LocaleMiddleware)."""

from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class DomainError(Exception):
    status: int = 400
    code: str = "invalid-request"
    title: str | Promise = _("Invalid request")

    def __init__(self, detail: str | None = None, **extra: object) -> None:
        self.detail = str(detail or self.title)
        self.extra = extra
        super().__init__(self.detail)


class InvalidRequest(DomainError):
    pass


class TooBusy(DomainError):
    """A lock wait ran out (`kernel.locking`): answer 503 and let the client retry."""

    status = 503
    code = "too-busy"
    title = _("Too busy")

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(
            detail or gettext("Many people are booking this right now. Please try again.")
        )


class IdempotencyKeyMissing(DomainError):
    status = 400
    code = "idempotency-key-missing"
    title = _("Idempotency-Key header required")


class IdempotencyKeyReused(DomainError):
    status = 422
    code = "idempotency-key-reused"
    title = _("Idempotency-Key was used for a different request")


class IdempotencyKeyInFlight(DomainError):
    status = 409
    code = "idempotency-key-in-flight"
    title = _("A request with this Idempotency-Key is still being processed")
    # A hold or a pay request finishes within seconds: ask the client back after one.
    RETRY_AFTER_SECONDS = 1

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail, retryAfter=self.RETRY_AFTER_SECONDS)
