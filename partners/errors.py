from __future__ import annotations

from kernel.errors import DomainError


class EndpointNotFound(DomainError):
    status = 404
    code = "not-found"
    title = "Not found"
