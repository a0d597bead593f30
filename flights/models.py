from decimal import Decimal

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _


class FareClass(models.TextChoices):
    BUSINESS = "BUSINESS", _("Business")
    ECONOMY = "ECONOMY", _("Economy")


class Airport(models.Model):
    code = models.CharField("IATA code", max_length=3, primary_key=True)
    name = models.CharField(max_length=120)
    city = models.CharField(max_length=80)
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2")
    time_zone = models.CharField(max_length=64, help_text="IANA time zone, e.g. Asia/Ho_Chi_Minh")

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=r"^[A-Z]{3}$"), name="airport_code_is_iata"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.city})"


class FlightStatus(models.TextChoices):
    SCHEDULED = "SCHEDULED", "Scheduled"
    DEPARTED = "DEPARTED", "Departed"
    CANCELLED = "CANCELLED", "Cancelled"


class Flight(models.Model):
    code = models.CharField(max_length=10, help_text="Marketing flight number, e.g. VN213")
    origin = models.ForeignKey(Airport, on_delete=models.PROTECT, related_name="departures")
    destination = models.ForeignKey(Airport, on_delete=models.PROTECT, related_name="arrivals")
    departure_at = models.DateTimeField()
    arrival_at = models.DateTimeField()
    status = models.CharField(
        max_length=10, choices=FlightStatus.choices, default=FlightStatus.SCHEDULED
    )
    gate = models.CharField(
        max_length=8, blank=True, default="", help_text="Departure gate; empty until known."
    )
    exit_rows = models.JSONField(
        default=list,
        blank=True,
        help_text="Row numbers of the emergency exit rows (from the cabin layout).",
    )

    class Meta:
        ordering = ["departure_at", "code"]
        indexes = [models.Index(fields=["origin", "destination", "departure_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["code", "departure_at"], name="flight_code_departure_uniq"
            ),
            models.CheckConstraint(
                condition=~Q(origin=F("destination")), name="flight_origin_not_destination"
            ),
            models.CheckConstraint(
                condition=Q(arrival_at__gt=F("departure_at")), name="flight_arrives_after_departure"
            ),
        ]

    def __str__(self) -> str:
        route = f"{self.origin_id}→{self.destination_id}"
        return f"{self.code} {route} {self.departure_at:%Y-%m-%d %H:%M}Z"


class FareInventory(models.Model):
    """Units of one fare class on one flight.

    `sold + held <= capacity + overbook_limit` is enforced by the database: whatever the code
    does, it cannot sell more than the airline allowed.
    """

    flight = models.ForeignKey(Flight, on_delete=models.CASCADE, related_name="inventories")
    fare_class = models.CharField(max_length=10, choices=FareClass.choices)
    capacity = models.PositiveIntegerField()
    overbook_limit = models.PositiveIntegerField(
        default=0, help_text="Seatless tickets that may be sold beyond the physical seats."
    )
    sold = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="EUR")

    class Meta:
        ordering = ["flight_id", "fare_class"]
        verbose_name_plural = "fare inventories"
        constraints = [
            models.UniqueConstraint(
                fields=["flight", "fare_class"], name="inventory_flight_class_uniq"
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
        return f"{self.flight.code} {self.fare_class}"

    @property
    def available(self) -> int:
        return max(self.capacity + self.overbook_limit - self.sold - self.held, 0)


class SeatStatus(models.TextChoices):
    AVAILABLE = "AVAILABLE", "Available"
    HELD = "HELD", "Held"
    SOLD = "SOLD", "Sold"
    BLOCKED = "BLOCKED", "Blocked"


class Seat(models.Model):
    flight = models.ForeignKey(Flight, on_delete=models.CASCADE, related_name="seats")
    seat_no = models.CharField(max_length=4)
    row = models.PositiveSmallIntegerField()
    letter = models.CharField(max_length=1)
    fare_class = models.CharField(max_length=10, choices=FareClass.choices)
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
        help_text="Added to the fare for this seat (exit row, front rows, ...).",
    )

    class Meta:
        ordering = ["flight_id", "row", "letter"]
        constraints = [
            models.UniqueConstraint(fields=["flight", "seat_no"], name="seat_flight_seat_no_uniq"),
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
