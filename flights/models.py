from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from bookings.models import Inventory, Sale, SeatStatus
from bookings.models import Seat as EngineSeat


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
    sale = models.OneToOneField(Sale, on_delete=models.PROTECT, related_name="flight")
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
            # A flight's id is its sale's id (docs/architecture.md, "The generic sale").
            models.CheckConstraint(condition=Q(id=F("sale")), name="flight_id_is_its_sale_id"),
        ]

    def __str__(self) -> str:
        route = f"{self.origin_id}→{self.destination_id}"
        return f"{self.code} {route} {self.departure_at:%Y-%m-%d %H:%M}Z"


class FareInventory(Inventory):
    """A flight's fare class: the engine's inventory row, seen by flight staff (admin, audit)."""

    class Meta:
        proxy = True
        verbose_name = "fare inventory"
        verbose_name_plural = "fare inventories"


class Seat(EngineSeat):
    """A cabin seat: the engine's seat row, under the flights admin."""

    class Meta:
        proxy = True


__all__ = [
    "Airport",
    "FareClass",
    "FareInventory",
    "Flight",
    "FlightStatus",
    "Seat",
    "SeatStatus",
]
