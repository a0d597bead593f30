from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from bookings.errors import HoldExpired, InvalidBookingState


class SaleKind(models.TextChoices):
    """Which catalogue owns a sale (and answers the engine's questions about it)."""

    FLIGHT = "FLIGHT", "Flight"
    EVENT = "EVENT", "Event"


class Sale(models.Model):
    """One sellable inventory: seats and inventory classes, owned by one catalogue item (a
    flight or an event, reached as `sale.flight` / `sale.event`).  The engine holds, sells and
    releases a sale's units without knowing what they are; it asks the catalogue registered for
    `kind` (bookings.catalogue) whether the sale is open and how to describe it."""

    kind = models.CharField(max_length=10, choices=SaleKind.choices)
    created_at = models.DateTimeField()
    # Issue 29: a hold may not leave a single free seat between its seats and a taken seat,
    # an aisle or a row end (bookings.adjacency).  Events keep the rule, staff may switch it
    # off per event; flights never had it.
    keeps_no_single_seats = models.BooleanField(default=False)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        # Named by what it sells, as staff pick it ("flight VN213 · SGN → HAN · …"): the
        # catalogue says; a sale whose item is not written yet keeps its bare name.
        from bookings import catalogue

        try:
            summary = catalogue.describe(self)
        except (ObjectDoesNotExist, LookupError):
            return f"{self.get_kind_display()} sale {self.pk}"
        when = summary.starts_at.astimezone(ZoneInfo(summary.time_zone))
        return f"{summary.title} · {summary.place} · {when:%Y-%m-%d %H:%M} {when.tzname()}"


class Inventory(models.Model):
    """Units of one inventory class (a flight's fare class, an event's price category) of a sale.

    `sold + held <= capacity + overbook_limit` is enforced by the database: whatever the code
    does, it cannot sell more than the catalogue allowed.  `fare_class` is the class's code; its
    meaning (and the valid codes) belong to the catalogue.
    """

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="inventories")
    fare_class = models.CharField(max_length=10, help_text="Inventory-class code of the sale.")
    capacity = models.PositiveIntegerField()
    overbook_limit = models.PositiveIntegerField(
        default=0, help_text="Seatless units that may be sold beyond the physical seats."
    )
    sold = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="EUR")

    class Meta:
        ordering = ["sale_id", "fare_class"]
        verbose_name_plural = "inventories"
        constraints = [
            models.UniqueConstraint(
                fields=["sale", "fare_class"], name="inventory_sale_class_uniq"
            ),
            models.CheckConstraint(
                condition=Q(sold__lte=F("capacity") + F("overbook_limit") - F("held")),
                name="inventory_sold_plus_held_within_limit",
            ),
            models.CheckConstraint(condition=Q(sold__gte=0), name="inventory_sold_non_negative"),
            models.CheckConstraint(condition=Q(held__gte=0), name="inventory_held_non_negative"),
            models.CheckConstraint(
                condition=Q(capacity__gte=0), name="inventory_capacity_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(overbook_limit__gte=0), name="inventory_overbook_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(price__gte=Decimal("0")), name="inventory_price_non_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"sale {self.sale_id} {self.fare_class}"

    @property
    def available(self) -> int:
        return max(self.capacity + self.overbook_limit - self.sold - self.held, 0)


class SeatStatus(models.TextChoices):
    AVAILABLE = "AVAILABLE", "Available"
    HELD = "HELD", "Held"
    SOLD = "SOLD", "Sold"
    BLOCKED = "BLOCKED", "Blocked"


class Seat(models.Model):
    """One physical seat of a sale, known to everyone by `seat_no` (unique per sale; the lock
    order sorts by it, docs/architecture.md).  A cabin seat is `row` + `letter` ("12A"); a
    venue seat is `section` (its name), `row_label` as printed ("F") and `number`, with `row`
    its front-to-back index and `letter` blank.  `row` orders the drawing either way."""

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="seats")
    seat_no = models.CharField(max_length=16)
    section = models.CharField(max_length=60, blank=True, default="")
    row = models.PositiveSmallIntegerField()
    letter = models.CharField(max_length=1, blank=True)
    row_label = models.CharField(
        max_length=8, blank=True, default="", help_text="Venue seats: the row as printed."
    )
    number = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Venue seats: the seat number in its row."
    )
    fare_class = models.CharField(max_length=10, help_text="Inventory-class code of the sale.")
    status = models.CharField(
        max_length=10, choices=SeatStatus.choices, default=SeatStatus.AVAILABLE
    )
    held_until = models.DateTimeField(null=True, blank=True)
    booking = models.ForeignKey(
        "bookings.Booking", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    surcharge = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text="Added to the class price for this seat (exit row, front rows, ...).",
    )
    accessible = models.BooleanField(default=False, help_text="Wheelchair or companion seat.")
    restricted_view = models.BooleanField(default=False)
    # Neighbours (bookings.adjacency): seats of one `row_key` stand in one physical row and
    # `place` is the position along it in grid steps; an aisle or a gap leaves a step out.
    row_key = models.CharField(max_length=24, blank=True, default="")
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    quality = models.FloatField(default=0.0, help_text="Best available: lower is better.")

    class Meta:
        ordering = ["sale_id", "row", "letter"]
        indexes = [models.Index(fields=["sale", "row_key"], name="seat_sale_row_key_idx")]
        constraints = [
            models.UniqueConstraint(fields=["sale", "seat_no"], name="seat_sale_seat_no_uniq"),
            models.CheckConstraint(
                condition=(
                    Q(status=SeatStatus.AVAILABLE, booking__isnull=True, held_until__isnull=True)
                    | Q(status=SeatStatus.BLOCKED, booking__isnull=True, held_until__isnull=True)
                    | Q(status=SeatStatus.HELD, booking__isnull=False, held_until__isnull=False)
                    | Q(status=SeatStatus.SOLD, booking__isnull=False, held_until__isnull=True)
                ),
                name="seat_status_matches_booking",
            ),
            models.CheckConstraint(
                condition=Q(surcharge__gte=0), name="seat_surcharge_non_negative"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.seat_no} ({self.status})"


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


# --- the waitlist of sold-out inventory classes -------------------------------------------


class WaitlistStatus(models.TextChoices):
    WAITING = "WAITING", "Waiting"
    OFFERED = "OFFERED", "Offered a hold"
    BOOKED = "BOOKED", "Booked"
    LAPSED = "LAPSED", "Offer lapsed"
    LEFT = "LEFT", "Left the waitlist"
    CLOSED = "CLOSED", "Closed (flight departed)"


ACTIVE_WAITLIST_STATUSES = (WaitlistStatus.WAITING, WaitlistStatus.OFFERED)


class WaitlistEntry(models.Model):
    """A customer waiting for `party_size` units of a sold-out fare class, served in join order."""

    sale = models.ForeignKey(Sale, on_delete=models.CASCADE, related_name="waitlist")
    fare_class = models.CharField(max_length=10, help_text="Inventory-class code of the sale.")
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="waitlist_entries"
    )
    party_size = models.PositiveSmallIntegerField()
    # A seated party (issue 29): the sections it accepts (empty: any) and the most it pays
    # per seat, surcharge included (None: the class price, whatever it is).
    sections = models.JSONField(default=list, blank=True)
    max_seat_price = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=WaitlistStatus.choices, default=WaitlistStatus.WAITING
    )
    offer = models.OneToOneField(
        Booking,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="waitlist_entry",
        help_text="The hold created for this entry when units freed up.",
    )
    joined_at = models.DateTimeField()
    offered_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table the waitroom app created before the waitlist joined the engine (issue 14).
        db_table = "waitroom_waitlistentry"
        ordering = ["id"]
        verbose_name_plural = "waitlist entries"
        indexes = [
            models.Index(
                fields=["sale", "fare_class", "id"],
                condition=Q(status="WAITING"),
                name="waitlist_waiting_order_idx",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["sale", "fare_class", "customer"],
                condition=Q(status__in=["WAITING", "OFFERED"]),
                name="waitlist_one_active_entry_per_customer",
            ),
            models.CheckConstraint(
                condition=Q(party_size__gte=1) & Q(party_size__lte=9), name="waitlist_party_1_to_9"
            ),
            models.CheckConstraint(
                condition=~Q(status="OFFERED") | Q(offer__isnull=False),
                name="waitlist_offer_has_booking",
            ),
        ]

    def __str__(self) -> str:
        where = f"{self.sale_id}/{self.fare_class}"
        return f"Waitlist {self.pk} {where} x{self.party_size} ({self.status})"


# The rotating codes' keys and the offline gates' rows live in their own module (issue 29).
from bookings.booking_class_models import BookingClass  # noqa: E402, F401
from bookings.gate_models import (  # noqa: E402, F401
    GateDevice,
    GateScan,
    KeyOrigin,
    ScanFlag,
    TicketCredential,
)
from bookings.resale_models import ACTIVE_RESALE_STATUSES, Resale, ResaleStatus  # noqa: E402, F401
