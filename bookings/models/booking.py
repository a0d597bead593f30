"""What a customer holds or bought: the booking, its passengers and their tickets."""

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.errors import HoldExpired, InvalidBookingState
from bookings.models.sales import Sale, Seat


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
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="bookings")
    fare_class = models.CharField(max_length=10)
    booking_class = models.CharField(
        max_length=10,
        blank=True,
        default="",
        help_text="Booking class nested in the fare class; blank: the fare class's own.",
    )
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
            # The hold cap counts one customer's live holds on one sale, on every hold
            # (bookings.holding._LIVE_HELD_UNITS_SQL and the hold function's copy): without
            # this index, mid-sale (statistics from before the rush) PostgreSQL read it
            # through the expiry index above, every live hold on every sale, per hold.
            models.Index(
                fields=["customer", "sale"],
                condition=Q(status="HELD"),
                name="booking_held_customer_sale_idx",
            ),
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

    @property
    def is_closed_unflown(self) -> bool:
        """CONFIRMED but closed: every passenger was taken off the flight (denied boarding).
        The units stay sold (the status says so to the counters and the audit); the reason is
        on the passengers' DeniedBoarding rows."""
        return self.status == BookingStatus.CONFIRMED and self.closed_at is not None

    def passengers_shown(
        self, passengers: "Iterable[Passenger] | None" = None
    ) -> "list[Passenger]":
        """Who the booking is for, of `passengers` (default: all of its own, prefetched or
        not): its live passengers while it is live (a ticket resold out of it is the buyer's
        now: bookings.resale), all of them once it is closed (who it was for)."""
        everyone = self.passengers.all() if passengers is None else passengers
        return [p for p in everyone if p.is_live or not self.is_live]

    def hold_lapsed(self, now: datetime | None = None) -> bool:
        """THE rule "this hold has lapsed": still HELD, but past its deadline, whether or not
        the sweep has marked it EXPIRED yet."""
        return self.status == BookingStatus.HELD and self.expires_at <= (now or timezone.now())

    def check_cancellable(self, *, statuses: tuple[str, ...], refused: str) -> None:
        """The one state rule of giving a booking up (`cancel_hold`, payments'
        `cancel_booking`): an expired hold says so (its seats are already released); any other
        status outside `statuses` is refused with `refused`, a message naming %(status)s."""
        if self.status == BookingStatus.EXPIRED:
            raise HoldExpired(gettext("This hold had already expired; its seats are released."))
        if self.is_closed_unflown:
            # Denied boarding closed it: its fare was refunded or rerouted, and its units stay
            # sold so the oversold flight cannot sell them again (docs/departure.md).
            raise InvalidBookingState(gettext("This booking was closed at departure."))
        if self.status not in statuses:
            raise InvalidBookingState(refused % {"status": str(self.get_status_display()).lower()})


class Passenger(models.Model):
    """One traveller of a booking, with the seat they hold (None for a seatless ticket).

    `is_live` mirrors whether the booking is HELD or CONFIRMED, so the database itself can
    refuse a second live booking on the same seat.
    """

    booking = models.ForeignKey(Booking, on_delete=models.CASCADE, related_name="passengers")
    # The booking's sale, copied so a Citus cluster can put the row beside it
    # (kernel/sharding.py); written with the booking, never changed.
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="+")
    seat = models.ForeignKey(
        Seat, on_delete=models.PROTECT, null=True, blank=True, related_name="passengers"
    )
    full_name = models.CharField(max_length=120, blank=True)
    is_live = models.BooleanField(default=True)
    # The customer confirmed the conditions of this passenger's seat (a flight's exit row:
    # docs/departure.md) at the hold, when naming the passengers, or at check-in.  A confirmation
    # is for the seat it was given for: a seat change clears it (bookings.seat_changes), and a
    # rebooking is a new passenger without one.  Check-in refuses an exit-row seat without it.
    seat_conditions_confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["booking_id", "id"]
        constraints = [
            # Sale first for Citus (kernel/sharding.py); a seat is of one sale, so the rule
            # is the same.
            models.UniqueConstraint(
                fields=["sale", "seat"],
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
    """One passenger's ticket; name, sale, seat and inventory class are copied at issue time,
    because the booking's passengers and seats are let go when it closes."""

    booking = models.ForeignKey(Booking, on_delete=models.PROTECT, related_name="tickets")
    passenger = models.OneToOneField(Passenger, on_delete=models.PROTECT, related_name="ticket")
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="tickets")
    # Random (96 bits); unique within the sale, where the gate looks it up (kernel/sharding.py).
    serial = models.CharField(max_length=24)
    # Unique through `serial`, which it contains; up to ~800 characters with a long name.
    code = models.CharField(max_length=1000, help_text="Signed content, as in the QR code.")
    passenger_name = models.CharField(max_length=120, blank=True)
    seat_no = models.CharField(
        max_length=16, blank=True, help_text="Blank: seat assigned at the gate."
    )
    fare_class = models.CharField(max_length=10)
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
            models.UniqueConstraint(fields=["sale", "serial"], name="ticket_serial_per_sale"),
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
