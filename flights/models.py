from zoneinfo import ZoneInfo

from django.db import models
from django.db.models import F, Q
from django.utils import translation
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
    # The customer-facing names in the site's other languages (issue 31); blank: the English
    # one.  Read through `local_city` / `local_name`, never directly on a page.
    name_de = models.CharField("name (German)", max_length=120, blank=True, default="")
    name_ru = models.CharField("name (Russian)", max_length=120, blank=True, default="")
    city_de = models.CharField("city (German)", max_length=80, blank=True, default="")
    city_ru = models.CharField("city (Russian)", max_length=80, blank=True, default="")
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2")
    time_zone = models.CharField(max_length=64, help_text="IANA time zone, e.g. Asia/Ho_Chi_Minh")
    # Degrees (WGS 84).  EU 261 compensation is banded by the great-circle distance between
    # two airports (flights.geo); an airport without coordinates has no distance.
    latitude = models.DecimalField(max_digits=8, decimal_places=5, null=True, blank=True)
    longitude = models.DecimalField(max_digits=8, decimal_places=5, null=True, blank=True)

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=r"^[A-Z]{3}$"), name="airport_code_is_iata"
            ),
            models.CheckConstraint(
                condition=(
                    Q(latitude__isnull=True, longitude__isnull=True)
                    # Spelled out: a CHECK that meets one NULL is unknown, and unknown passes.
                    | Q(
                        latitude__isnull=False,
                        longitude__isnull=False,
                        latitude__gte=-90,
                        latitude__lte=90,
                        longitude__gte=-180,
                        longitude__lte=180,
                    )
                ),
                name="airport_coordinates_both_and_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.city})"

    @property
    def local_city(self) -> str:
        """The city in the active language (the customer's), else the English name."""
        return localised(self, "city")

    @property
    def local_name(self) -> str:
        return localised(self, "name")


LOCALISED_LANGUAGES = ("de", "ru")


def localised(airport: Airport, field: str, language: str | None = None) -> str:
    """`airport.<field>_<language>` when the language has one and it is filled in, else the
    English `<field>`.  `language` defaults to the active one."""
    language = (language or translation.get_language() or "en").split("-")[0]
    if language in LOCALISED_LANGUAGES:
        return getattr(airport, f"{field}_{language}") or getattr(airport, field)
    return getattr(airport, field)


class Carrier(models.Model):
    """An airline, known by the two-character IATA designator that starts its flight numbers.

    `is_eu_carrier` is Regulation (EC) No 261/2004 Art. 2(c): a "Community carrier" holds an
    operating licence granted by a Member State.  It decides whether a flight *arriving* in
    the EU from outside is covered (Art. 3(1)(b); flights.eu261)."""

    code = models.CharField("IATA designator", max_length=2, primary_key=True)
    name = models.CharField(max_length=120)
    is_eu_carrier = models.BooleanField(
        "EU carrier", default=False, help_text="Holds an operating licence of an EU Member State."
    )

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=Q(code__regex=r"^[A-Z0-9]{2}$"), name="carrier_code_is_iata"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} ({self.name})"


class FlightStatus(models.TextChoices):
    SCHEDULED = "SCHEDULED", "Scheduled"
    DEPARTED = "DEPARTED", "Departed"
    CANCELLED = "CANCELLED", "Cancelled"


class Flight(models.Model):
    sale = models.OneToOneField(Sale, on_delete=models.PROTECT, related_name="flight")
    code = models.CharField(max_length=10, help_text="Marketing flight number, e.g. VN213")
    carrier = models.ForeignKey(
        Carrier,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="flights",
        help_text="Operating carrier; empty: unknown, treated as a non-EU carrier (EU 261).",
    )
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
    gate_closes_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the gate closes; empty: 20 minutes before departure (flights.rules).",
    )
    online_checkin_opens_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty: 24 hours before departure (flights.rules)."
    )
    online_checkin_closes_at = models.DateTimeField(
        null=True, blank=True, help_text="Empty: 45 minutes before departure (flights.rules)."
    )
    gate_closed_at = models.DateTimeField(
        null=True, blank=True, help_text="When gate close began (no-shows, standby)."
    )
    gate_settled_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When every no-show was settled and the departure counts recorded.",
    )

    class Meta:
        ordering = ["departure_at", "code"]
        permissions = [("close_gate", "Can close the gate (no-shows, seats to standby)")]
        indexes = [models.Index(fields=["origin", "destination", "departure_at"])]
        # A flight number once per departure is a rule across sales: flights_flightnumber
        # (FlightNumber, below) keeps it, claimed before the flight's sale is written.
        constraints = [
            models.CheckConstraint(
                condition=~Q(origin=F("destination")), name="flight_origin_not_destination"
            ),
            models.CheckConstraint(
                condition=Q(arrival_at__gt=F("departure_at")), name="flight_arrives_after_departure"
            ),
            # A flight's id is its sale's id (docs/architecture.md, "The generic sale").
            models.CheckConstraint(condition=Q(id=F("sale")), name="flight_id_is_its_sale_id"),
            models.CheckConstraint(
                condition=Q(gate_settled_at__isnull=True) | Q(gate_closed_at__isnull=False),
                name="flight_gate_settled_after_closed",
            ),
        ]

    def __str__(self) -> str:
        # The origin's wall clock, zone named (issue 31 item 12): what staff see on the
        # departure board and in every admin field of the flight, not the UTC instant.
        route = f"{self.origin_id}→{self.destination_id}"
        local = self.departure_at.astimezone(ZoneInfo(self.origin.time_zone))
        return f"{self.code} {route} {local:%Y-%m-%d %H:%M} {local.tzname()}"


class FlightNumber(models.Model):
    """A flight number taken for one departure: (code, departure_at) once across every flight.

    The rule spans sales, so on a cluster distributed by sale no node could check it beside
    the flight's rows; this small global table does (kernel/sharding.py, GLOBAL), claimed in
    its own transaction *before* the flight's sale is written (flights.flight_numbers).  No
    foreign key to the flight (a global table cannot key a distributed one): a claim is live
    while a flight has its number, or while it is fresh (its flight still being written)."""

    code = models.CharField(max_length=10)
    departure_at = models.DateTimeField()
    claimed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["code", "departure_at"], name="flight_number_once_per_departure"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.departure_at:%Y-%m-%d %H:%M}Z"


class NoShow(models.Model):
    """A ticket not boarded at gate close: voided, its seat passed to standby if anyone was
    waiting.  One per ticket (the database refuses a second); the overbooking forecast counts
    these (flights.show_up_model)."""

    # By the flight's sale id (= its id, a CHECK): the key carries the distribution column.
    flight = models.ForeignKey(
        Flight, on_delete=models.CASCADE, to_field="sale", related_name="no_shows"
    )
    ticket = models.OneToOneField(
        "bookings.Ticket", on_delete=models.PROTECT, related_name="no_show"
    )
    fare_class = models.CharField(max_length=10)
    seat_no = models.CharField(max_length=16, blank=True, help_text="Blank: a seatless unit.")
    seat_given_to = models.OneToOneField(
        "bookings.Ticket",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="standby_seat_from",
        help_text="The standby passenger's ticket that took the seat.",
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["flight_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(seat_given_to__isnull=True) | ~Q(seat_no=""),
                name="noshow_seat_given_only_if_it_had_one",
            ),
        ]

    def __str__(self) -> str:
        return f"No-show {self.ticket_id} on {self.flight_id} {self.seat_no or '-'}"


class OnlineCheckIn(models.Model):
    """A passenger checked in online (flights.online_checkin), once."""

    # By the flight's sale id (= its id, a CHECK): the key carries the distribution column.
    flight = models.ForeignKey(
        Flight, on_delete=models.CASCADE, to_field="sale", related_name="online_checkins"
    )
    passenger = models.OneToOneField(
        "bookings.Passenger", on_delete=models.CASCADE, related_name="online_checkin"
    )
    checked_in_at = models.DateTimeField()
    # What this check-in said, kept as its record; no rule reads it.  The confirmation every
    # rule reads is the passenger's (`Passenger.seat_conditions_confirmed_at`; flights 0015
    # carried the older ones over).
    exit_row_confirmed = models.BooleanField(
        default=False, help_text="Confirmed the exit-row conditions (able and willing to help)."
    )
    # Art. 11: they board first and are never denied boarding (flights.denied_boarding).
    reduced_mobility = models.BooleanField(default=False)
    unaccompanied_minor = models.BooleanField(default=False)

    class Meta:
        ordering = ["flight_id", "checked_in_at", "id"]

    def __str__(self) -> str:
        return f"Online check-in of passenger {self.passenger_id} on {self.flight_id}"


class CabinDeparture(models.Model):
    """What gate close measured for one fare class of one flight: the data behind the
    overbooking forecast.  `sold` are the units sold at gate close; showed = sold - no_shows,
    and `volunteers` and `denied` (taken off before gate close) are among the shows, or the
    forecast would learn from its own denials."""

    # By the flight's sale id (= its id, a CHECK): the key carries the distribution column.
    flight = models.ForeignKey(
        Flight, on_delete=models.CASCADE, to_field="sale", related_name="cabin_departures"
    )
    fare_class = models.CharField(max_length=10)
    capacity = models.PositiveIntegerField(help_text="Physical seats of the class.")
    overbook_limit = models.PositiveIntegerField(help_text="The limit this flight sold under.")
    sold = models.PositiveIntegerField()
    boarded = models.PositiveIntegerField()
    no_shows = models.PositiveIntegerField()
    standby_seated = models.PositiveIntegerField(default=0)
    unseated = models.PositiveIntegerField(
        default=0, help_text="Reported at the gate with a seatless unit and found no seat."
    )
    volunteers = models.PositiveIntegerField(
        default=0, help_text="Gave up their seat for compensation (Art. 4(1)): shows."
    )
    denied = models.PositiveIntegerField(
        default=0, help_text="Denied boarding against their will (Art. 4(3)): shows."
    )
    recorded_at = models.DateTimeField()

    class Meta:
        ordering = ["flight_id", "fare_class"]
        constraints = [
            models.UniqueConstraint(
                fields=["flight", "fare_class"], name="cabin_departure_once_per_class"
            ),
            models.CheckConstraint(
                condition=Q(no_shows__lte=F("sold")), name="cabin_departure_no_shows_of_sold"
            ),
            # Volunteers and the denied were sold and stay sold (their units are not given
            # back, docs/departure.md); none of them is a no-show.
            models.CheckConstraint(
                condition=Q(no_shows__lte=F("sold") - F("volunteers") - F("denied")),
                name="cabin_departure_taken_off_of_sold",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.flight_id} {self.fare_class}: {self.no_shows}/{self.sold} no-shows"


class FareInventory(Inventory):
    """A flight's fare class: the engine's inventory row, seen by flight staff (admin, audit)."""

    class Meta:
        proxy = True
        verbose_name = "fare inventory"
        verbose_name_plural = "fare inventories"
        permissions = [
            (
                "accept_overbook_suggestion",
                "Can set an overbook limit to the one suggested from measured no-shows",
            )
        ]


class Seat(EngineSeat):
    """A cabin seat: the engine's seat row, under the flights admin."""

    class Meta:
        proxy = True


from flights.denied_models import (  # noqa: E402  (models of this app, split for size)
    Compensation,
    DeniedBoarding,
    DeniedKind,
    OfferStatus,
    PayoutMethod,
    PayoutStatus,
    VolunteerOffer,
)

__all__ = [
    "Airport",
    "CabinDeparture",
    "Carrier",
    "Compensation",
    "DeniedBoarding",
    "DeniedKind",
    "FareClass",
    "FareInventory",
    "Flight",
    "FlightNumber",
    "FlightStatus",
    "NoShow",
    "OfferStatus",
    "OnlineCheckIn",
    "PayoutMethod",
    "PayoutStatus",
    "Seat",
    "SeatStatus",
    "VolunteerOffer",
]
