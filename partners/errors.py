from __future__ import annotations

from bookings.errors import DomainError


class EndpointNotFound(DomainError):
    status = 404
    code = "not-found"
    title = "Not found"
