"""Rows of the rotating codes and the offline gates (issue 29): each ticket's certified keys,
the gate devices with their measured clocks, and the scans they sync.  Imported by
`bookings.models`, so they are the engine's models like any other."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from bookings.models import Sale, Ticket


class KeyOrigin(models.TextChoices):
    DEVICE = "DEVICE", _("Made on the customer's device")
    SERVER = "SERVER", _("Made by the server for the page")


class TicketCredential(models.Model):
    """One certified public key of a ticket.  A ticket has at most one current credential:
    certifying a new key (another phone) supersedes the old one, whose certificate id then
    appears in every gate's revocation list."""

    # The ticket's sale (a copy): the credential is that sale's row (kernel/sharding.py).
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="+")
    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, related_name="credentials")
    cert_id = models.CharField(max_length=24, help_text="Random; unique within the sale.")
    key_id = models.CharField(max_length=32, help_text="The sale key (version) that certified.")
    public_key = models.CharField(max_length=64, help_text="The ticket's key, raw, base64url.")
    origin = models.CharField(max_length=10, choices=KeyOrigin.choices)
    certificate = models.CharField(max_length=1200)
    certified_at = models.DateTimeField()
    superseded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["ticket_id", "id"]
        constraints = [
            # Sale first for Citus; a ticket and its certificates are of one sale.
            models.UniqueConstraint(fields=["sale", "cert_id"], name="credential_cert_id_per_sale"),
            models.UniqueConstraint(
                fields=["sale", "ticket"],
                condition=Q(superseded_at__isnull=True),
                name="one_current_credential_per_ticket",
            ),
        ]

    def __str__(self) -> str:
        return f"Credential {self.cert_id} of ticket {self.ticket_id}"


class GateDevice(models.Model):
    """A scanner that works offline for one sale.  Its clock is measured against ours at
    every download and sync (`clock_offset_ms` = its clock minus ours at `clock_gate_at`, its
    own reading), so its scans can be put on our time line."""

    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="gate_devices")
    name = models.CharField(max_length=80)
    operator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    created_at = models.DateTimeField()
    clock_gate_at = models.DateTimeField()
    clock_offset_ms = models.BigIntegerField()
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        permissions = [
            ("operate_gate", "Can run an offline gate: download its bundle and sync its scans"),
        ]

    def __str__(self) -> str:
        return f"Gate {self.name} (sale {self.sale_id})"


class ScanFlag(models.TextChoices):
    NONE = "", _("Admitted")
    DUPLICATE = "DUPLICATE", _("Second entry: the ticket was admitted earlier elsewhere")
    REVOKED = "REVOKED", _("Admitted after the ticket was revoked (before the gate synced)")
    SUPERSEDED = "SUPERSEDED", _("Admitted on a key the ticket had replaced")
    UNKNOWN = "UNKNOWN", _("No such ticket of this sale")


class GateScan(models.Model):
    """One scan an offline gate made, as it synced it.  `scanned_at_gate` is the gate's own
    clock; `scanned_at` is that moment on our clock (the skew rule, docs/tickets.md)."""

    # The device's sale (a copy): the scan is that sale's row, as its ticket is.
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="+")
    device = models.ForeignKey(GateDevice, on_delete=models.PROTECT, related_name="scans")
    local_id = models.CharField(max_length=40, help_text="The gate's id: a resent scan is one.")
    ticket = models.ForeignKey(Ticket, on_delete=models.PROTECT, null=True, related_name="+")
    serial = models.CharField(max_length=24, blank=True)
    cert_id = models.CharField(max_length=24, blank=True)
    gate_outcome = models.CharField(max_length=20, help_text="What the gate said offline.")
    scanned_at_gate = models.DateTimeField()
    scanned_at = models.DateTimeField()
    received_at = models.DateTimeField()
    flag = models.CharField(max_length=12, choices=ScanFlag.choices, blank=True, default="")

    class Meta:
        ordering = ["scanned_at", "device_id", "local_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["sale", "device", "local_id"], name="one_scan_per_local_id"
            ),
        ]
        indexes = [models.Index(fields=["ticket", "scanned_at"])]

    def __str__(self) -> str:
        return f"Scan {self.local_id} at gate {self.device_id}: {self.gate_outcome} {self.flag}"
