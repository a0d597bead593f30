"""What a sale offers: the sale itself, its inventory classes with their limits, and its
seats."""

from decimal import Decimal
from zoneinfo import ZoneInfo

from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.db.models import F, Q


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
