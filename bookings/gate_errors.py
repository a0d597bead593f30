"""Domain errors of the rotating codes and the offline gates (issue 29)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from kernel.errors import DomainError


class TicketNotLive(DomainError):
    status = 409
    code = "ticket-not-live"
    title = _("This ticket has no live code")


class TicketKeyOnDevice(DomainError):
    status = 409
    code = "ticket-key-on-device"
    title = _("This ticket's key is on the customer's device")


class GateDeviceNotFound(DomainError):
    status = 404
    code = "gate-device-not-found"
    title = _("No such gate device")
