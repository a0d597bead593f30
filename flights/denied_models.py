"""Denied boarding under EU 261 (docs/departure.md): volunteers' offers, the passengers who do
not fly (volunteers and those denied), and the compensation ledger, which is not a refund."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from flights.eu261 import Remedy


class PayoutMethod(models.TextChoices):
    CASH = "CASH", _("Cash (bank transfer or cheque, Art. 7(3))")
    VOUCHER = "VOUCHER", _("Travel voucher (only with the passenger's signed agreement)")


class OfferStatus(models.TextChoices):
    OFFERED = "OFFERED", _("Offered")
    ACCEPTED = "ACCEPTED", _("Accepted")
    DECLINED = "DECLINED", _("Declined")
    WITHDRAWN = "WITHDRAWN", _("Withdrawn (enough volunteers, or the flight closed)")


class VolunteerOffer(models.Model):
    """An offer to a checked-in passenger to give up their seat (Art. 4(1)): compensation in
    money or voucher, plus rebooking or a refund.  One per passenger and flight."""

    # By the flight's sale id (= its id, a CHECK): the key carries the distribution column.
    flight = models.ForeignKey(
        "flights.Flight", on_delete=models.CASCADE, to_field="sale", related_name="+"
    )
    passenger = models.ForeignKey("bookings.Passenger", on_delete=models.CASCADE, related_name="+")
    booking = models.ForeignKey("bookings.Booking", on_delete=models.CASCADE, related_name="+")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(
        max_length=10, choices=OfferStatus.choices, default=OfferStatus.OFFERED
    )
    offered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    offered_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["flight_id", "offered_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["flight", "passenger"], name="volunteer_offer_once_per_passenger"
            ),
            models.CheckConstraint(condition=Q(amount__gte=0), name="volunteer_offer_amount_ge_0"),
        ]

    def __str__(self) -> str:
        return f"Volunteer offer to passenger {self.passenger_id} on {self.flight_id}"


class DeniedKind(models.TextChoices):
    VOLUNTEER = "VOLUNTEER", _("Volunteered (Art. 4(1))")
    DENIED = "DENIED", _("Denied boarding against their will (Art. 4(3))")


class DeniedBoarding(models.Model):
    """A checked-in passenger who does not fly on this flight: a volunteer or denied.  One per
    passenger (UNIQUE); who decided is kept, and the care offered (Art. 9)."""

    # By the flight's sale id (= its id, a CHECK): the key carries the distribution column.
    flight = models.ForeignKey(
        "flights.Flight", on_delete=models.CASCADE, to_field="sale", related_name="denied_boardings"
    )
    passenger = models.OneToOneField(
        "bookings.Passenger", on_delete=models.PROTECT, related_name="denied_boarding"
    )
    booking = models.ForeignKey("bookings.Booking", on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=10, choices=DeniedKind.choices)
    remedy = models.CharField(max_length=10, choices=Remedy.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField()
    # The new booking is the *later* flight's sale's row, so no database key (a cluster
    # distributed by sale cannot keep one across sales: kernel.sharding.CROSS_SALE_LINKS);
    # written by flights.rerouting once that booking committed, never changed after.
    rebooked_onto = models.ForeignKey(
        "bookings.Booking",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        db_constraint=False,
        related_name="rebooked_from",
        help_text="The new booking on the next flight of the route (rerouting; empty while "
        "it is being booked).",
    )
    # Planned at the denial (the next flight with a free unit), then the booked flight's.
    rerouted_arrival_delay = models.DurationField(null=True, blank=True)
    care_offered = models.JSONField(
        default=list, blank=True, help_text="Art. 9 care offered: meals, hotel, transport, calls."
    )
    reason = models.CharField(max_length=200)

    class Meta:
        ordering = ["flight_id", "decided_at", "id"]
        permissions = [("deny_boarding", "Can ask for volunteers and deny boarding")]
        constraints = [
            # A refund has no new booking; a rerouting has its planned delay from the start
            # and its booking once flights.rerouting booked it.
            models.CheckConstraint(
                condition=Q(remedy=Remedy.REFUND, rebooked_onto__isnull=True)
                | Q(remedy=Remedy.REROUTING, rerouted_arrival_delay__isnull=False),
                name="denied_boarding_rerouting_names_its_booking",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: passenger {self.passenger_id} on {self.flight_id}"


class PayoutStatus(models.TextChoices):
    PENDING = "PENDING", _("Pending")
    PAID = "PAID", _("Paid")


class Compensation(models.Model):
    """The compensation ledger: one entry per passenger who did not fly, paid through its own
    payout (flights.compensation), never through refunds: it is not the fare and may exceed
    it.  A voucher only with the passenger's signed agreement (a CHECK)."""

    # The denied boarding's flight, keyed by its sale id (= the flight's id, by a CHECK), so
    # the entry is distributed by sale beside its flight's rows (kernel/sharding.py).
    flight = models.ForeignKey(
        "flights.Flight", on_delete=models.PROTECT, to_field="sale", related_name="+"
    )
    denied_boarding = models.OneToOneField(
        DeniedBoarding, on_delete=models.PROTECT, related_name="compensation"
    )
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3)
    rule = models.CharField(max_length=80, help_text="The article and band the amount comes from.")
    reduced = models.BooleanField(default=False, help_text="Halved under Art. 7(2).")
    method = models.CharField(max_length=10, choices=PayoutMethod.choices)
    voucher_agreement_signed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=10, choices=PayoutStatus.choices, default=PayoutStatus.PENDING
    )
    paid_at = models.DateTimeField(null=True, blank=True)
    paid_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    payout_reference = models.CharField(max_length=60, blank=True)

    class Meta:
        ordering = ["id"]
        permissions = [("pay_compensation", "Can pay out EU 261 compensation")]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="compensation_amount_gt_0"),
            models.CheckConstraint(
                condition=~Q(method="VOUCHER") | Q(voucher_agreement_signed_at__isnull=False),
                name="compensation_voucher_needs_signed_agreement",
            ),
            models.CheckConstraint(
                condition=Q(status="PENDING", paid_at__isnull=True)
                | Q(status="PAID", paid_at__isnull=False),
                name="compensation_paid_has_a_time",
            ),
        ]

    def __str__(self) -> str:
        return f"Compensation {self.amount} {self.currency} ({self.status})"
