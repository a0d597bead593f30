"""The events catalogue: venues with their seating plan, events at a venue, price categories.

A venue's plan is sections, rows and seats (or a standing area sold by count).  An event sells
that plan: each seat and each standing area is priced by exactly one of the event's categories,
through `CategoryAssignment` rules ("category A: section Stalls rows 1-5").
"""

from datetime import timedelta
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from events.colours import validate_category_colour
from payments.currency import NotChargeable, check_chargeable


class StageSide(models.TextChoices):
    """Where the stage is drawn on the plan (the seats face it)."""

    TOP = "TOP", _("Top")
    BOTTOM = "BOTTOM", _("Bottom")
    LEFT = "LEFT", _("Left")
    RIGHT = "RIGHT", _("Right")


class Venue(models.Model):
    name = models.CharField(max_length=120)
    city = models.CharField(max_length=80)
    address = models.CharField(max_length=200, blank=True, default="")
    time_zone = models.CharField(max_length=64, help_text="IANA time zone, e.g. Europe/Berlin")
    stage_side = models.CharField(
        max_length=6,
        choices=StageSide.choices,
        default=StageSide.TOP,
        help_text="Where the stage is drawn on the seat plan.",
    )
    plan_version = models.PositiveIntegerField(
        default=1,
        help_text="Counts the plan's saves: the seat-map editor refuses a save over a newer "
        "plan (its API's ETag / If-Match).",
    )

    class Meta:
        ordering = ["city", "name"]
        constraints = [
            models.UniqueConstraint(fields=["name", "city"], name="venue_name_city_uniq"),
            models.CheckConstraint(condition=~Q(city=""), name="venue_city_not_empty"),
            models.CheckConstraint(condition=~Q(time_zone=""), name="venue_time_zone_not_empty"),
        ]

    def __str__(self) -> str:
        return f"{self.name}, {self.city}"


class SectionKind(models.TextChoices):
    SEATED = "SEATED", _("Seated")
    STANDING = "STANDING", _("Standing (general admission)")


class Section(models.Model):
    """A block of seats, or a standing area sold by count up to `capacity`."""

    venue = models.ForeignKey(Venue, on_delete=models.CASCADE, related_name="sections")
    name = models.CharField(max_length=60)
    kind = models.CharField(max_length=8, choices=SectionKind.choices, default=SectionKind.SEATED)
    position = models.PositiveSmallIntegerField(
        default=1, help_text="Drawing order on the plan: 1 is nearest the stage."
    )
    capacity = models.PositiveIntegerField(
        null=True, blank=True, help_text="Standing areas only: how many tickets it holds."
    )

    class Meta:
        ordering = ["venue_id", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["venue", "name"], name="section_venue_name_uniq"),
            models.CheckConstraint(condition=~Q(name=""), name="section_name_not_empty"),
            models.CheckConstraint(
                condition=(
                    Q(kind=SectionKind.SEATED, capacity__isnull=True)
                    | Q(kind=SectionKind.STANDING, capacity__isnull=False, capacity__gt=0)
                ),
                name="section_capacity_only_when_standing",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class VenueSeat(models.Model):
    """One seat of the plan.  `row` is the label printed on the ticket ("12", "F");
    `row_index` orders the rows of a section front to back (1 nearest the stage) and is what
    row ranges ("rows 3-8", "rows C-F") compare.  x/y place the seat in its section's grid."""

    section = models.ForeignKey(Section, on_delete=models.CASCADE, related_name="seats")
    row = models.CharField(max_length=8)
    row_index = models.PositiveSmallIntegerField()
    number = models.PositiveSmallIntegerField()
    x = models.PositiveSmallIntegerField(help_text="Column in the section's grid, from 1.")
    y = models.PositiveSmallIntegerField(help_text="Line in the section's grid, from 1.")
    accessible = models.BooleanField(default=False, help_text="Wheelchair space or step-free.")
    restricted_view = models.BooleanField(default=False)
    quality = models.FloatField(
        null=True,
        blank=True,
        help_text=_(
            "Best available ranks seats by this, lower first. Empty: the distance from the "
            "stage centre."
        ),
    )

    class Meta:
        ordering = ["section_id", "row_index", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["section", "row", "number"], name="venue_seat_section_row_number_uniq"
            ),
            models.UniqueConstraint(fields=["section", "x", "y"], name="venue_seat_position_uniq"),
            models.CheckConstraint(condition=~Q(row=""), name="venue_seat_row_not_empty"),
            models.CheckConstraint(condition=Q(number__gte=1), name="venue_seat_number_positive"),
            models.CheckConstraint(condition=Q(row_index__gte=1), name="venue_seat_row_index_pos"),
            models.CheckConstraint(condition=Q(x__gte=1, y__gte=1), name="venue_seat_grid_pos"),
        ]

    def __str__(self) -> str:
        return f"{self.section.name} row {self.row} seat {self.number}"

    @property
    def label(self) -> str:
        return f"{self.row}-{self.number}"


class EventCategory(models.TextChoices):
    """What kind of show it is (the search filter).  Not to be confused with price categories."""

    CONCERT = "CONCERT", _("Concert")
    SPORT = "SPORT", _("Sport")
    THEATRE = "THEATRE", _("Theatre")
    CINEMA = "CINEMA", _("Cinema")
    COMEDY = "COMEDY", _("Comedy")
    OTHER = "OTHER", _("Other")


class EventStatus(models.TextChoices):
    DRAFT = "DRAFT", _("Draft")
    ON_SALE = "ON_SALE", _("On sale")
    CANCELLED = "CANCELLED", _("Cancelled")
    FINISHED = "FINISHED", _("Finished")


DEFAULT_EVENT_DURATION = timedelta(hours=3)


class Event(models.Model):
    name = models.CharField(max_length=160)
    venue = models.ForeignKey(Venue, on_delete=models.PROTECT, related_name="events")
    category = models.CharField(max_length=10, choices=EventCategory.choices)
    starts_at = models.DateTimeField()
    # Existing events got the default when the field came (migration 0003): a show of three
    # hours, the usual concert or play with its interval.
    duration = models.DurationField(
        default=DEFAULT_EVENT_DURATION,
        help_text="How long it lasts (e.g. 2:30:00): it is finished this long after its start.",
    )
    on_sale_at = models.DateTimeField(help_text="When tickets can first be bought.")
    status = models.CharField(max_length=10, choices=EventStatus.choices, default=EventStatus.DRAFT)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    sale = models.OneToOneField(
        "bookings.Sale",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="event",
        help_text="What the sale engine sells: the plan as it was when the event went on sale.",
    )

    class Meta:
        ordering = ["starts_at", "name"]
        indexes = [models.Index(fields=["status", "starts_at"])]
        constraints = [
            models.CheckConstraint(condition=~Q(name=""), name="event_name_not_empty"),
            models.CheckConstraint(
                condition=Q(on_sale_at__lt=F("starts_at")), name="event_on_sale_before_start"
            ),
            models.CheckConstraint(
                condition=Q(duration__gt=timedelta(0)), name="event_duration_positive"
            ),
            models.UniqueConstraint(
                fields=["venue", "starts_at", "name"], name="event_venue_start_name_uniq"
            ),
            # A draft sells nothing: its sale is opened when it goes on sale.
            models.CheckConstraint(
                condition=~Q(status="DRAFT") | Q(sale__isnull=True), name="event_draft_no_sale"
            ),
        ]

    def __str__(self) -> str:
        # The venue's wall clock, zone named: what staff see on the poster.
        local = self.starts_at.astimezone(ZoneInfo(self.venue.time_zone))
        return f"{self.name} ({local:%Y-%m-%d %H:%M} {local.tzname()})"

    @property
    def ends_at(self):
        return self.starts_at + self.duration


class PriceCategory(models.Model):
    """A price band of one event ("A — Front stalls, 89.00 EUR").  Its `code` is what the
    sale engine knows the seats by (the inventory-class code, like a flight's fare class)."""

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="price_categories")
    code = models.CharField(max_length=10, help_text="Short code: A, B, C, VIP, ...")
    name = models.CharField(max_length=60)
    price = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="EUR")
    colour = models.CharField(
        max_length=7,
        default="#2563eb",
        help_text="Hex colour on the seat plan, e.g. #2563eb; dark enough to stand out from "
        "taken seats (contrast at least 3:1).",
        validators=[validate_category_colour],
    )

    class Meta:
        ordering = ["event_id", "code"]
        verbose_name_plural = "price categories"
        constraints = [
            models.UniqueConstraint(
                fields=["event", "code"], name="price_category_event_code_uniq"
            ),
            models.CheckConstraint(
                condition=Q(code__regex=r"^[A-Z][A-Z0-9]{0,9}$"), name="price_category_code_format"
            ),
            models.CheckConstraint(
                condition=Q(price__gte=Decimal("0")), name="price_category_price_non_negative"
            ),
            models.CheckConstraint(
                condition=Q(currency__regex=r"^[A-Z]{3}$"), name="price_category_currency_iso"
            ),
            models.CheckConstraint(
                condition=Q(colour__regex=r"^#[0-9a-fA-F]{6}$"), name="price_category_colour_hex"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.code} — {self.name} ({self.price} {self.currency})"

    def clean(self) -> None:
        # The payment gateway's rule (payments.currency), shown to staff on the price field.
        if self.price is None or not self.currency:
            return
        try:
            check_chargeable(self.price, self.currency)
        except NotChargeable as exc:
            raise ValidationError({"price": str(exc)}) from None


class CategoryAssignment(models.Model):
    """ "Seats of `section`, rows `first_row`..`last_row` (or the whole section), are sold in
    `category`."  A standing area is always assigned whole: that is its price.  Which rules
    may overlap is checked by `events.services.assign_categories` (one category per seat)."""

    category = models.ForeignKey(
        PriceCategory, on_delete=models.CASCADE, related_name="assignments"
    )
    section = models.ForeignKey(Section, on_delete=models.PROTECT, related_name="+")
    first_row = models.CharField(max_length=8, blank=True, default="")
    last_row = models.CharField(max_length=8, blank=True, default="")

    class Meta:
        ordering = ["category_id", "section_id", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(first_row="", last_row="") | (~Q(first_row="") & ~Q(last_row="")),
                name="assignment_rows_both_or_none",
            ),
        ]

    def __str__(self) -> str:
        rows = f" rows {self.first_row}-{self.last_row}" if self.first_row else ""
        return f"{self.category.code}: {self.section.name}{rows}"
