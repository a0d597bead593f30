"""The waitlist of sold-out inventory classes: who waits for units, and the hold offered to
them when units free up (the services are bookings.waitlist)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from bookings.models.booking import Booking
from bookings.models.sales import Sale


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
