from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError


class EndpointNotFound(DomainError):
    status = 404
    code = "not-found"
    title = _("Not found")
