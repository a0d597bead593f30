"""The mail outbox: e-mails decided inside a transaction, sent after it commits."""

from django.db import models
from django.db.models import Q

from bookings.models.booking import Booking
from bookings.models.sales import Sale


class NotificationKind(models.TextChoices):
    BOOKING_CONFIRMED = "booking_confirmed", "Booking confirmed"
    BOOKING_EXPIRED = "booking_expired", "Hold expired"
    BOOKING_CANCELLED = "booking_cancelled", "Booking cancelled"
    REFUND_ISSUED = "refund_issued", "Refund issued"
    WAITLIST_OFFER = "waitlist_offer", "Waitlist offer"
    VOLUNTEER_OFFER = "volunteer_offer", "Offer to give up a seat (oversold flight)"
    BOARDING_DENIED = "boarding_denied", "Not flying: compensation and rebooking"
    RESALE_SOLD = "resale_sold", "Resold tickets: refund on its way"


class NotificationStatus(models.TextChoices):
    PENDING = "PENDING", "Pending"
    PREPARING = "PREPARING", "Preparing (claimed by a worker, nothing sent yet)"
    SENDING = "SENDING", "Sending (handed to the mail backend)"
    SENT = "SENT", "Sent"
    UNCERTAIN = "UNCERTAIN", "Maybe sent (the worker died while sending; not resent)"
    FAILED = "FAILED", "Failed"


class Notification(models.Model):
    """An e-mail decided inside a transaction and sent after it commits (a mail outbox)."""

    # The booking's sale (a copy, like a passenger's): the e-mail is that sale's row.
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="+")
    booking = models.ForeignKey(Booking, on_delete=models.PROTECT, related_name="notifications")
    event = models.ForeignKey(
        "kernel.OutboxEvent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    kind = models.CharField(max_length=30, choices=NotificationKind.choices)
    to = models.EmailField()
    context = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=10, choices=NotificationStatus.choices, default=NotificationStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["updated_at"],
                condition=Q(status__in=["PENDING", "PREPARING", "SENDING"]),
                name="notification_unsent_idx",
            ),
        ]
        constraints = [
            # One e-mail per event and kind, however often the event is delivered.
            models.UniqueConstraint(
                fields=["sale", "event", "kind"],
                condition=Q(event__isnull=False),
                name="notification_once_per_event",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to} ({self.status})"
