"""Partners' outgoing webhooks: the endpoints they register and our log of deliveries."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q

from kernel.outbox_types import OutboxEventType
from partners.secret_box import open_sealed, seal


class PartnerEventType(models.TextChoices):
    """The outbox event types partners may subscribe to (a subset of kernel.outbox_types)."""

    BOOKING_CONFIRMED = OutboxEventType.BOOKING_CONFIRMED.value, "Booking confirmed"
    BOOKING_CANCELLED = OutboxEventType.BOOKING_CANCELLED.value, "Booking cancelled"
    REFUND_ISSUED = OutboxEventType.REFUND_ISSUED.value, "Refund issued"
    WAITLIST_OFFERED = OutboxEventType.WAITLIST_OFFERED.value, "Waitlist offer made"
    # The day of departure (docs/departure.md): each step with who decided it.
    VOLUNTEERS_ASKED = OutboxEventType.VOLUNTEERS_ASKED.value, "Volunteers asked"
    VOLUNTEER_ANSWERED = OutboxEventType.VOLUNTEER_ANSWERED.value, "A volunteer offer answered"
    BOARDING_DENIED = OutboxEventType.BOARDING_DENIED.value, "Boarding denied or given up"
    COMPENSATION_PAID = OutboxEventType.COMPENSATION_PAID.value, "EU 261 compensation paid"


class WebhookEndpoint(models.Model):
    """A URL a partner wants our events POSTed to, signed with its own secret."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_endpoints"
    )
    url = models.URLField(max_length=500)
    # The signing secret, sealed (partners.secret_box): shown once, when the endpoint is
    # created or its secret rotated; never stored in clear.
    secret_sealed = models.TextField()
    # During a rotation the previous secret signs too, until it expires: a partner switches
    # its verifier over without dropping one delivery.
    previous_secret_sealed = models.TextField(blank=True, default="")
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    event_types = models.JSONField(default=list, help_text="Subscribed event types.")
    is_active = models.BooleanField(default=True)
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["id"]
        permissions = [
            ("manage_own_webhooks", "Can register webhook endpoints of their own"),
            # Not implied by is_staff: a gate scanner may manage its own endpoint and must
            # still hear only about its own bookings.
            (
                "receive_all_bookings",
                "Endpoints of this user receive every customer's booking events",
            ),
        ]

    def __str__(self) -> str:
        return self.url

    @property
    def secret(self) -> str:
        return open_sealed(self.secret_sealed)

    @secret.setter
    def secret(self, value: str) -> None:
        self.secret_sealed = seal(value)

    def live_secrets(self, *, now: datetime) -> list[str]:
        """Every secret that signs a delivery at `now`: the current one first, then the
        previous one while its rotation overlap lasts."""
        found = [self.secret]
        if (
            self.previous_secret_sealed
            and self.previous_secret_expires_at
            and now < self.previous_secret_expires_at
        ):
            found.append(open_sealed(self.previous_secret_sealed))
        return found


class DeliveryStatus(models.TextChoices):
    PENDING = "PENDING"
    SENDING = "SENDING"
    DELIVERED = "DELIVERED"
    FAILED = "FAILED"


class WebhookDelivery(models.Model):
    """One event for one endpoint.  Unique per (endpoint, event id): a redelivered outbox
    event never makes a second row, so the log shows one record per event and endpoint."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    # The stable id the receiver dedupes by (body `id` and the Seatkeeper-Event-Id header).
    event_id = models.UUIDField()
    # No foreign key: the log outlives the purge of published outbox events.
    outbox_event_id = models.BigIntegerField()
    event_type = models.CharField(max_length=60, choices=PartnerEventType.choices)
    occurred_at = models.DateTimeField()
    data = models.JSONField(default=dict)
    status = models.CharField(
        max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_response_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "event_id"], name="partners_one_delivery_per_event_endpoint"
            ),
            models.CheckConstraint(
                condition=Q(status="DELIVERED", delivered_at__isnull=False)
                | ~Q(status="DELIVERED"),
                name="partners_delivered_has_time",
            ),
        ]
        indexes = [
            models.Index(
                fields=["status", "next_attempt_at"],
                condition=Q(status__in=["PENDING", "SENDING"]),
                name="partners_delivery_due_idx",
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id} -> endpoint {self.endpoint_id}"
