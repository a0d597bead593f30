"""Payment records: our side of every charge, refund and webhook, plus the sandbox provider's
own ledger (the simulated gateway keeps its state here, as a real provider keeps it on theirs)."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from bookings import catalogue
from bookings.models import SaleKind


class PaymentStatus(models.TextChoices):
    PROCESSING = "PROCESSING", _("Processing")  # row committed, gateway call not answered yet
    PENDING = "PENDING", _("Awaiting customer")  # gateway wants the customer (hosted checkout)
    SUCCEEDED = "SUCCEEDED", _("Succeeded")
    FAILED = "FAILED", _("Failed")
    REFUND_REQUIRED = "REFUND_REQUIRED", _("Refund required")  # paid for a hold that was gone
    REFUNDED = "REFUNDED", _("Refunded")


# A booking has at most one payment under way: a second charge attempt is refused up front.
# (SUCCEEDED is not in the set: a late success of an earlier attempt must still be recordable,
# and is refunded when the booking was already paid.)
IN_FLIGHT_PAYMENT_STATUSES = (PaymentStatus.PROCESSING, PaymentStatus.PENDING)


class Payment(models.Model):
    booking = models.ForeignKey(
        "bookings.Booking", on_delete=models.PROTECT, related_name="payments"
    )
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="payments"
    )
    # The booking's sale, copied so a Citus cluster can put the row beside it
    # (kernel/sharding.py); written with the payment, never changed.
    sale = models.ForeignKey("bookings.Sale", on_delete=models.PROTECT, related_name="+")
    idempotency_key = models.CharField(
        max_length=255,
        null=True,
        blank=True,
        help_text=(
            "Client's Idempotency-Key, unique per customer and sale; cleared after retention."
        ),
    )
    request_fingerprint = models.CharField(max_length=64)
    status = models.CharField(
        max_length=16, choices=PaymentStatus.choices, default=PaymentStatus.PROCESSING
    )
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    refunded_amount = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0.00"))
    gateway = models.CharField(max_length=20)
    gateway_reference = models.CharField(max_length=120, blank=True)
    checkout_url = models.CharField(max_length=500, blank=True)
    client_secret = models.CharField(
        max_length=300,
        blank=True,
        help_text="Stripe PaymentIntent client secret for Stripe.js (3-D Secure), if any.",
    )
    payment_method_token = models.CharField(
        max_length=100,
        blank=True,
        help_text="A gateway token (Stripe pm_...), kept to reconcile by idempotency key. "
        "Never a card number.",
    )
    failure_reason = models.CharField(max_length=200, blank=True)
    response_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="HTTP status stored for Idempotency-Key replays."
    )
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    succeeded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["gateway", "gateway_reference"]),
            models.Index(fields=["booking", "-created_at"]),
        ]
        constraints = [
            # A customer's key within one sale (payments 0013): the sale's node checks it
            # under Citus; the pay request names its booking, so its sale is known first.
            models.UniqueConstraint(
                fields=["sale", "customer", "idempotency_key"],
                name="payment_idempotency_key_per_customer",
            ),
            # Sale first for Citus (kernel/sharding.py); a booking is of one sale.
            models.UniqueConstraint(
                fields=["sale", "booking"],
                condition=Q(status__in=IN_FLIGHT_PAYMENT_STATUSES),
                name="payment_one_in_flight_per_booking",
            ),
            models.CheckConstraint(condition=Q(amount__gte=0), name="payment_amount_non_negative"),
            models.CheckConstraint(
                condition=Q(refunded_amount__gte=0) & Q(refunded_amount__lte=F("amount")),
                name="payment_refund_within_amount",
            ),
        ]

    def __str__(self) -> str:
        return f"Payment {self.pk} {self.amount} {self.currency} ({self.status})"


class RefundStatus(models.TextChoices):
    PENDING = "PENDING", _("Pending")
    SUCCEEDED = "SUCCEEDED", _("Succeeded")
    FAILED = "FAILED", _("Failed")


class RefundReason(models.TextChoices):
    LATE_PAYMENT = "LATE_PAYMENT", _("Paid after the hold ended")
    FLIGHT_CLOSED = "FLIGHT_CLOSED", _("Paid after the flight departed or was cancelled")
    CANCELLATION = "CANCELLATION", _("Booking cancelled")
    NAMES_MISSING = "NAMES_MISSING", _("Paid while a passenger had no name")
    AMOUNT_MISMATCH = "AMOUNT_MISMATCH", _("The gateway captured another amount than the price")
    RESALE = "RESALE", _("Tickets resold through the waitlist")


class Refund(models.Model):
    payment = models.ForeignKey(Payment, on_delete=models.PROTECT, related_name="refunds")
    # The payment's sale (kernel/sharding.py), written with the refund.
    sale = models.ForeignKey("bookings.Sale", on_delete=models.PROTECT, related_name="+")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(
        max_length=10, choices=RefundStatus.choices, default=RefundStatus.PENDING
    )
    reason = models.CharField(max_length=20, choices=RefundReason.choices)
    gateway_reference = models.CharField(max_length=120, blank=True)
    failure_reason = models.CharField(max_length=200, blank=True)
    # Audit of a staff cancellation: who approved it, and whether it overrode the policy.
    goodwill = models.BooleanField(
        default=False,
        help_text="A full refund granted as goodwill instead of what the refund policy gives.",
    )
    policy_amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="What the refund policy would have given, when goodwill overrode it.",
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The staff member who cancelled with this refund (blank: the customer).",
    )
    # The resale whose sale this refund pays out (reason RESALE): a booking may resell its
    # tickets in parts, each refunded once (payments.resale).
    resale = models.ForeignKey(
        "bookings.Resale", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [
            (
                "refund_goodwill",
                "Can refund a cancellation in full as goodwill, overriding the refund policy",
            ),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="refund_amount_positive"),
            models.CheckConstraint(
                condition=Q(goodwill=False)
                | (Q(approved_by__isnull=False) & Q(policy_amount__isnull=False)),
                name="refund_goodwill_is_approved",
            ),
            # A payment is refunded at most once per reason: a replayed cancellation or a
            # duplicated late success can never pay the customer back twice.
            # (The sale leads only so a Citus cluster can keep the rule on one node; a payment
            # is of one sale, so the rule is the same.)
            models.UniqueConstraint(
                fields=["sale", "payment", "reason"],
                condition=Q(resale__isnull=True),
                name="refund_once_per_reason",
            ),
            # ... and a resale's refund once per resale (a booking may resell in parts).
            models.UniqueConstraint(
                fields=["sale", "resale"],
                condition=Q(resale__isnull=False),
                name="refund_once_per_resale",
            ),
            models.CheckConstraint(
                condition=Q(reason="RESALE", resale__isnull=False)
                | (~Q(reason="RESALE") & Q(resale__isnull=True)),
                name="refund_resale_names_its_resale",
            ),
        ]

    def __str__(self) -> str:
        return f"Refund {self.pk} {self.amount} {self.currency} ({self.status})"


class WebhookEvent(models.Model):
    """A gateway event we accepted.  The unique event id is what makes redelivery harmless."""

    gateway = models.CharField(max_length=20)
    event_id = models.CharField(max_length=120)
    event_type = models.CharField(max_length=60)
    payload = models.JSONField(default=dict)
    outcome = models.CharField(max_length=200, blank=True)
    received_at = models.DateTimeField()
    processed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(fields=["gateway", "event_id"], name="webhook_event_once"),
        ]

    def __str__(self) -> str:
        return f"{self.gateway} {self.event_type} {self.event_id}"


class RefundPolicy(models.Model):
    """How much of a confirmed booking's payment comes back on cancellation; edited by staff.

    At least `full_refund_days` before the start: everything.  After that and until
    `partial_refund_hours` before it: `partial_refund_percent`.  Closer than that: nothing.
    After the start a booking cannot be cancelled at all.

    A policy belongs to one catalogue (`kind`): an event category named ECONOMY never gets the
    airline's policy, and every event's category "A" is not one policy across all events.
    With `sale` it overrides the catalogue's for that sale only.  A blank `fare_class` covers
    every class (an event's categories are chosen per event).  The most specific wins:
    (sale, class), (sale, any), (catalogue, class), (catalogue, any), then the defaults.
    """

    kind = models.CharField(
        max_length=10, choices=SaleKind.choices, help_text="The catalogue this policy is for."
    )
    sale = models.ForeignKey(
        "bookings.Sale",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text="Only this sale (an override); blank: every sale of the catalogue.",
    )
    fare_class = models.CharField(
        max_length=10, blank=True, help_text="Inventory-class code; blank: every class."
    )
    full_refund_days = models.PositiveSmallIntegerField(default=14)
    partial_refund_percent = models.PositiveSmallIntegerField(default=50)
    partial_refund_hours = models.PositiveSmallIntegerField(default=24)
    resale_fee_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text="Kept from the seller's refund when their tickets are resold (0-100).",
    )
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["kind", "sale_id", "fare_class"]
        verbose_name_plural = "refund policies"
        constraints = [
            models.CheckConstraint(
                condition=Q(partial_refund_percent__lte=100), name="refund_policy_percent_max_100"
            ),
            models.CheckConstraint(
                condition=Q(resale_fee_percent__gte=0) & Q(resale_fee_percent__lte=100),
                name="refund_policy_resale_fee_0_to_100",
            ),
            models.UniqueConstraint(
                fields=["kind", "fare_class"],
                condition=Q(sale__isnull=True),
                name="refund_policy_one_per_catalogue_class",
            ),
            models.UniqueConstraint(
                fields=["sale", "fare_class"],
                condition=Q(sale__isnull=False),
                name="refund_policy_one_per_sale_class",
            ),
        ]

    def __str__(self) -> str:
        where = f"sale {self.sale_id}" if self.sale_id else self.get_kind_display()
        return f"{where} {self.fare_class or 'every class'} refund policy"

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        if self.sale_id is not None and self.sale.kind != self.kind:
            raise ValidationError({"sale": "This sale belongs to another catalogue."})
        if self.kind and self.fare_class:
            codes = catalogue.for_kind(self.kind).class_codes
            if codes is not None and self.fare_class not in codes:
                raise ValidationError(
                    {"fare_class": f"Not a class of this catalogue: one of {', '.join(codes)}."}
                )


# --- the sandbox provider's side ---------------------------------------------------------------


class SandboxChargeStatus(models.TextChoices):
    REQUIRES_ACTION = "requires_action", _("Requires action")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELED = "canceled", _("Canceled")  # the merchant abandoned it before the customer paid


class SandboxCharge(models.Model):
    """A charge as the simulated provider records it."""

    id = models.CharField(primary_key=True, max_length=40)
    idempotency_key = models.CharField(max_length=120, unique=True)
    merchant_reference = models.CharField(max_length=60, help_text="Our payment id.")
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3)
    status = models.CharField(max_length=20, choices=SandboxChargeStatus.choices)
    card_last4 = models.CharField(max_length=4, blank=True)
    decline_code = models.CharField(max_length=40, blank=True)
    refunded_amount = models.DecimalField(max_digits=12, decimal_places=2, default=Decimal("0.00"))
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(refunded_amount__lte=F("amount")), name="sandbox_refund_within_charge"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class SandboxRefund(models.Model):
    id = models.CharField(primary_key=True, max_length=40)
    charge = models.ForeignKey(SandboxCharge, on_delete=models.PROTECT, related_name="refunds")
    idempotency_key = models.CharField(max_length=120, unique=True)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id


class SandboxEvent(models.Model):
    """An event the sandbox owes our webhook endpoint; its body is fixed at creation so every
    (re)delivery carries the same event id and payload."""

    id = models.CharField(primary_key=True, max_length=40)
    charge = models.ForeignKey(SandboxCharge, on_delete=models.CASCADE, related_name="events")
    event_type = models.CharField(max_length=40)
    payload = models.JSONField()
    attempts = models.PositiveIntegerField(default=0)
    last_status = models.PositiveSmallIntegerField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    # When its delivery task was published (payments.gateways.sandbox_delivery); None: owed.
    queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [
            # The relay's claim: only the few events not yet queued are in it.
            models.Index(
                fields=["created_at"],
                condition=models.Q(queued_at__isnull=True),
                name="sandbox_event_unqueued_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.id}"
