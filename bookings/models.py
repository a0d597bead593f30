from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from flights.models import FareClass


class BookingStatus(models.TextChoices):
    HELD = "HELD", _("Held")
    CONFIRMED = "CONFIRMED", _("Confirmed")
    EXPIRED = "EXPIRED", _("Expired")
    CANCELLED = "CANCELLED", _("Cancelled")


LIVE_STATUSES = (BookingStatus.HELD, BookingStatus.CONFIRMED)


class Booking(models.Model):
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bookings"
    )
    flight = models.ForeignKey("flights.Flight", on_delete=models.PROTECT, related_name="bookings")
    fare_class = models.CharField(max_length=10, choices=FareClass.choices)
    status = models.CharField(
        max_length=10, choices=BookingStatus.choices, default=BookingStatus.HELD
    )
    seat_count = models.PositiveSmallIntegerField(
        help_text="Units of fare inventory this booking takes: one per passenger."
    )
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    expires_at = models.DateTimeField(help_text="End of the hold; meaningless once confirmed.")
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the booking expired or was cancelled."
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            ("book_on_behalf", "Can book on behalf of customers (travel agents, staff)"),
        ]
        indexes = [
            # The expiry sweep scans live holds by deadline.
            models.Index(
                fields=["expires_at"], condition=Q(status="HELD"), name="booking_held_expiry_idx"
            ),
            models.Index(fields=["customer", "-created_at"]),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(seat_count__gte=1) & Q(seat_count__lte=9),
                name="booking_seat_count_1_to_9",
            ),
            models.CheckConstraint(condition=Q(amount__gte=0), name="booking_amount_non_negative"),
        ]

    def __str__(self) -> str:
        return f"Booking {self.pk} ({self.status})"

    @property
    def is_live(self) -> bool:
        return self.status in LIVE_STATUSES


class Passenger(models.Model):
    """One traveller of a booking, with the seat they hold (None for a seatless ticket).

    `is_live` mirrors whether the booking is HELD or CONFIRMED, so the database itself can
    refuse a second live booking on the same seat.
    """

    booking = models.ForeignKey(Booking, on_delete=models.CASCADE, related_name="passengers")
    seat = models.ForeignKey(
        "flights.Seat", on_delete=models.PROTECT, null=True, blank=True, related_name="passengers"
    )
    full_name = models.CharField(max_length=120, blank=True)
    is_live = models.BooleanField(default=True)

    class Meta:
        ordering = ["booking_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["seat"],
                condition=Q(is_live=True, seat__isnull=False),
                name="passenger_one_live_booking_per_seat",
            ),
        ]

    def __str__(self) -> str:
        return self.full_name or f"Passenger {self.pk}"


class TicketStatus(models.TextChoices):
    VALID = "VALID", _("Valid")
    USED = "USED", _("Used")
    REVOKED = "REVOKED", _("Revoked")


class Ticket(models.Model):
    """One passenger's ticket; name, flight, seat and fare class are copied at issue time,
    because the booking's passengers and seats are let go when it closes."""

    booking = models.ForeignKey(Booking, on_delete=models.PROTECT, related_name="tickets")
    passenger = models.OneToOneField(Passenger, on_delete=models.PROTECT, related_name="ticket")
    flight = models.ForeignKey("flights.Flight", on_delete=models.PROTECT, related_name="tickets")
    serial = models.CharField(max_length=24, unique=True)
    # Unique through `serial`, which it contains; up to ~800 characters with a long name.
    code = models.CharField(max_length=1000, help_text="Signed content, as in the QR code.")
    passenger_name = models.CharField(max_length=120, blank=True)
    seat_no = models.CharField(
        max_length=4, blank=True, help_text="Blank: seat assigned at the gate."
    )
    fare_class = models.CharField(max_length=10, choices=FareClass.choices)
    status = models.CharField(
        max_length=10, choices=TicketStatus.choices, default=TicketStatus.VALID
    )
    issued_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["booking_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="USED") | Q(used_at__isnull=False), name="ticket_used_has_time"
            ),
            models.CheckConstraint(
                condition=~Q(status="REVOKED") | Q(revoked_at__isnull=False),
                name="ticket_revoked_has_time",
            ),
        ]

    def __str__(self) -> str:
        return f"Ticket {self.serial} {self.seat_no or '-'} ({self.status})"


class NotificationKind(models.TextChoices):
    BOOKING_CONFIRMED = "booking_confirmed", "Booking confirmed"
    BOOKING_EXPIRED = "booking_expired", "Hold expired"
    BOOKING_CANCELLED = "booking_cancelled", "Booking cancelled"
    REFUND_ISSUED = "refund_issued", "Refund issued"
    WAITLIST_OFFER = "waitlist_offer", "Waitlist offer"


class NotificationStatus(models.TextChoices):
    PENDING = "PENDING", "Pending"
    PREPARING = "PREPARING", "Preparing (claimed by a worker, nothing sent yet)"
    SENDING = "SENDING", "Sending (handed to the mail backend)"
    SENT = "SENT", "Sent"
    UNCERTAIN = "UNCERTAIN", "Maybe sent (the worker died while sending; not resent)"
    FAILED = "FAILED", "Failed"


class Notification(models.Model):
    """An e-mail decided inside a transaction and sent after it commits (a mail outbox)."""

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
                fields=["event", "kind"],
                condition=Q(event__isnull=False),
                name="notification_once_per_event",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to} ({self.status})"
