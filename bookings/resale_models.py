"""The resale of a confirmed booking through the waitlist (issue 29, item 4).  Imported by
`bookings.models`, so it is the engine's model like any other; the services are
bookings.resale."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from bookings.models import Booking, Sale


class ResaleStatus(models.TextChoices):
    LISTED = "LISTED", _("Listed: waiting for a buyer")
    OFFERED = "OFFERED", _("Offered to someone on the waitlist")
    SOLD = "SOLD", _("Sold")
    WITHDRAWN = "WITHDRAWN", _("Withdrawn by the seller")


ACTIVE_RESALE_STATUSES = (ResaleStatus.LISTED, ResaleStatus.OFFERED)


class Resale(models.Model):
    """A customer who can no longer go offers some or all tickets of `booking` at face value.

    `passenger_ids` are the travellers (one ticket each) listed: all of the booking's, or
    the ones the seller chose.  The seller's booking, seats and tickets stay theirs until a
    buyer pays: `offer` is the waitlist hold made for the buyer (a HELD booking without
    seats and without inventory units of its own, since the units are still the seller's).
    Paying for it hands exactly those seats and units over and revokes exactly those tickets
    in the same transaction; the seller is refunded `face_value - fee` (payments.resale).
    The rest of the booking stays the seller's, and may be listed again later."""

    # The seller's sale: the listing is that sale's row on a cluster distributed by sale
    # (kernel/sharding.py).
    sale = models.ForeignKey(Sale, on_delete=models.PROTECT, related_name="+")
    booking = models.ForeignKey(Booking, on_delete=models.PROTECT, related_name="resales")
    status = models.CharField(
        max_length=10, choices=ResaleStatus.choices, default=ResaleStatus.LISTED
    )
    offer = models.OneToOneField(
        Booking,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="resale_offer",
        help_text="The waitlist hold currently offering these tickets.",
    )
    buyer_booking = models.OneToOneField(
        Booking,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="bought_resale",
        help_text="The booking that bought these tickets.",
    )
    passenger_ids = models.JSONField(
        default=list,
        help_text="The seller's passengers (one ticket each) listed; their seats go to the buyer.",
    )
    face_value = models.DecimalField(
        max_digits=12, decimal_places=2, help_text="What the listed tickets cost the seller."
    )
    fee = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text="Kept from the seller's refund; fixed when listed (refund policy's fee).",
    )
    currency = models.CharField(max_length=3)
    listed_at = models.DateTimeField()
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["booking"],
                condition=Q(status__in=["LISTED", "OFFERED"]),
                name="resale_one_active_per_booking",
            ),
            models.CheckConstraint(
                condition=~Q(status="OFFERED") | Q(offer__isnull=False),
                name="resale_offered_has_offer",
            ),
            models.CheckConstraint(
                condition=~Q(status="SOLD") | Q(buyer_booking__isnull=False),
                name="resale_sold_has_buyer",
            ),
            models.CheckConstraint(
                condition=Q(fee__gte=0) & Q(fee__lte=models.F("face_value")),
                name="resale_fee_within_face_value",
            ),
        ]

    def __str__(self) -> str:
        return f"Resale {self.pk} of booking {self.booking_id} ({self.status})"
