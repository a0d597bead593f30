"""Reads: refund quotes shown before a cancellation is confirmed, and the payment's API shape."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from bookings import catalogue, resale_selectors
from bookings.errors import BookingNotFound
from bookings.models import Booking, BookingStatus, Sale
from kernel.compiled import CompiledRead
from kernel.web.problems import problem_body
from payments.currency import round_to_unit
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundPolicy,
    RefundReason,
    RefundStatus,
)


@dataclass(frozen=True)
class RefundQuote:
    booking_id: int
    cancellable: bool
    rule: str  # "hold" | "full" | "partial" | "none" | "refused"
    percent: int
    amount: Decimal
    paid: Decimal
    currency: str
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {
            "bookingId": self.booking_id,
            "cancellable": self.cancellable,
            "rule": self.rule,
            "percent": self.percent,
            "refundAmount": str(self.amount),
            "paid": str(self.paid),
            "currency": self.currency,
            "reason": self.reason,
        }


def refund_policy_for(*, sale: Sale, fare_class: str) -> RefundPolicy:
    """The most specific staff-edited policy for `fare_class` of `sale` (see RefundPolicy),
    or the model defaults when staff never saved one.  Keyed by the sale's catalogue, never
    by the class code alone."""
    candidates = RefundPolicy.objects.filter(
        Q(sale_id=sale.pk) | Q(sale__isnull=True, kind=sale.kind),
        fare_class__in=[fare_class, ""],
    )

    def specificity(policy: RefundPolicy) -> tuple[bool, bool]:
        return (policy.sale_id is not None, policy.fare_class != "")

    best = max(candidates, key=specificity, default=None)
    return best or RefundPolicy(kind=sale.kind, fare_class=fare_class, updated_at=timezone.now())


def refund_percent(*, policy: RefundPolicy, sale: Sale, now: datetime) -> tuple[str, int, str]:
    """(rule, percent, human reason) for cancelling at `now`; rule "refused" means not allowed.
    Whether the sale was called off or has begun, and its start, come from its catalogue."""
    seller = catalogue.for_sale(sale)
    texts = seller.texts
    if seller.is_called_off(sale):
        return "full", 100, str(texts.refund_called_off)
    if seller.has_begun(sale, now=now):
        return "refused", 0, str(texts.refund_begun)
    left = seller.describe(sale).starts_at - now
    if left >= timedelta(days=policy.full_refund_days):
        return "full", 100, str(texts.refund_full) % {"days": policy.full_refund_days}
    if left >= timedelta(hours=policy.partial_refund_hours):
        return (
            "partial",
            policy.partial_refund_percent,
            str(texts.refund_partial)
            % {"days": policy.full_refund_days, "percent": policy.partial_refund_percent},
        )
    return "none", 0, str(texts.refund_none) % {"hours": policy.partial_refund_hours}


def paid_payment(*, booking_id: int) -> Payment | None:
    return Payment.objects.filter(booking_id=booking_id, status=PaymentStatus.SUCCEEDED).first()


def _still_paid(payment: Payment, *, booking: Booking) -> Decimal:
    """What a cancellation may still give back of `payment`: what was paid, less refunds
    made or on their way (a resale's refund is sent after its commit), less the fees kept
    for tickets resold (bookings.resale: those stay kept whatever happens to the rest)."""
    owed = Refund.objects.filter(payment_id=payment.pk, status=RefundStatus.PENDING).aggregate(
        pending=Sum("amount", default=Decimal("0.00"))
    )["pending"]
    kept = resale_selectors.fees_kept(booking_id=booking.pk)
    return max(payment.amount - payment.refunded_amount - owed - kept, Decimal("0.00"))


def quote_for(*, booking: Booking, payment: Payment | None, now: datetime) -> RefundQuote:
    """The refund for cancelling `booking` at `now` (its `sale` and the sale's catalogue
    item are read through `booking.sale`: select_related them to save the queries)."""
    paid = _still_paid(payment, booking=booking) if payment else Decimal("0.00")

    def quote(cancellable: bool, rule: str, percent: int, reason: str) -> RefundQuote:
        # To the currency's chargeable unit (half of ¥89 is ¥45, not ¥44.50): a refund the
        # gateway could not pay exactly would fail, or be rounded by it behind our back.
        amount = min(round_to_unit(paid * percent / 100, booking.currency), paid)
        return RefundQuote(
            booking.pk, cancellable, rule, percent, amount, paid, booking.currency, reason
        )

    if booking.status == BookingStatus.HELD:
        return quote(
            True, "hold", 0, _("Nothing has been paid yet; the seats are released at once.")
        )
    if booking.status != BookingStatus.CONFIRMED:
        return quote(
            False,
            "refused",
            0,
            _("This booking is already %(status)s.")
            % {"status": str(booking.get_status_display()).lower()},
        )
    rule, percent, reason = refund_percent(
        policy=refund_policy_for(sale=booking.sale, fare_class=booking.fare_class),
        sale=booking.sale,
        now=now,
    )
    return quote(rule != "refused", rule, percent, reason)


def quote_refund(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    by_staff: bool = False,
    now: datetime | None = None,
) -> RefundQuote:
    """What cancelling this booking now would pay back: shown before the customer confirms."""
    bookings = Booking.objects.select_related("sale", *catalogue.owner_paths("sale__"))
    if not by_staff:
        bookings = bookings.filter(customer=customer)
    booking = bookings.filter(pk=booking_id).first()
    if booking is None:
        raise BookingNotFound()
    return quote_for(
        booking=booking,
        payment=paid_payment(booking_id=booking.pk),
        now=now or timezone.now(),
    )


def latest_payment(*, booking_id: int) -> Payment | None:
    """The booking's most recent payment attempt: what its page reports (pending, declined...)."""
    return Payment.objects.filter(booking_id=booking_id).order_by("-created_at", "-id").first()


def refunds_of(*, booking_id: int) -> QuerySet[Refund]:
    return Refund.objects.filter(payment__booking_id=booking_id).order_by("created_at", "id")


# --- the API shape of a payment (also what Idempotency-Key replays return) ---------------------


def payment_json(payment: Payment, *, booking_status: str) -> dict[str, Any]:
    return {
        "paymentId": payment.pk,
        "bookingId": payment.booking_id,
        "status": payment.status,
        "bookingStatus": booking_status,
        "amount": str(payment.amount),
        "currency": payment.currency,
        "gateway": payment.gateway,
        "gatewayReference": payment.gateway_reference,
        "checkoutUrl": payment.checkout_url or None,
        "clientSecret": payment.client_secret or None,
    }


def payment_response(
    payment: Payment, *, booking_status: str | None = None
) -> tuple[int, dict[str, Any]]:
    """HTTP status and body for the outcome of a pay request.  `booking_status`: the booking's
    status read with the payment (`payment_with_booking_status`), else read here."""
    if booking_status is None:
        booking_status = Booking.objects.values_list("status", flat=True).get(pk=payment.booking_id)
    body = payment_json(payment, booking_status=booking_status)
    if payment.status == PaymentStatus.SUCCEEDED:
        return 201, body
    if payment.status == PaymentStatus.PENDING:
        return 202, body
    if payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED) and (
        payment.refunds.filter(reason=RefundReason.FLIGHT_CLOSED).exists()
    ):
        booking = Booking.objects.select_related("sale").get(pk=payment.booking_id)
        texts = catalogue.for_sale(booking.sale).texts
        return 409, problem_body(
            status=409,
            code=texts.problem_type("sale-not-bookable-refunded"),
            title=str(texts.closed_refunded_title),
            detail=str(texts.closed_refunded),
            payment=body,
        )
    if payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED) and (
        payment.refunds.filter(reason=RefundReason.NAMES_MISSING).exists()
    ):
        return 409, problem_body(
            status=409,
            code="passenger-names-missing-refunded",
            title="Passenger names missing",
            detail="The payment arrived while a passenger had no name, so nothing was sold and "
            "the payment is refunded in full. The seats are still held: give every passenger a "
            "name and pay again.",
            payment=body,
        )
    if payment.status in (PaymentStatus.REFUND_REQUIRED, PaymentStatus.REFUNDED):
        return 409, problem_body(
            status=409,
            code="hold-ended-refunded",
            title=_("Hold ended before the payment"),
            detail=_(
                "Your hold ended before the payment arrived, so the seats were released. "
                "The payment is refunded in full."
            ),
            payment=body,
        )
    if payment.failure_reason == "gateway_unavailable":
        return 502, problem_body(
            status=502,
            code="gateway-unavailable",
            title=_("Payment provider unavailable"),
            detail=_(
                "The payment provider could not be reached. Please try again with a new "
                "Idempotency-Key."
            ),
            payment=body,
        )
    return 402, problem_body(
        status=402,
        code="payment-declined",
        title=_("Payment declined"),
        detail=_("The payment was declined (%(reason)s). Please try another card.")
        % {"reason": payment.failure_reason or "declined"},
        payment=body,
    )


def payment_with_booking_status(payment_id: int) -> tuple[Payment, str]:
    """The payment and its booking's status, in one statement (what `payment_response` needs)."""
    payment = _PAYMENT_WITH_BOOKING_STATUS.first(payment_id=payment_id)
    if payment is None:
        raise Payment.DoesNotExist(f"Payment {payment_id} does not exist.")
    return payment, payment.current_booking_status


# Compiled once per connection (kernel.compiled): every answer a payment request stores.
_PAYMENT_WITH_BOOKING_STATUS = CompiledRead(
    Payment,
    lambda payment_id: (
        Payment.objects.annotate(current_booking_status=F("booking__status"))
        .filter(pk=payment_id)
        .order_by()[:1]
    ),
    payment_id=int,
)


# Compiled once per connection (kernel.compiled): a cancellation's and a resale's sale (the pay
# request reads the sale with its booking: payments.paying, payments.outcomes).
_SALE_WITH_OWNER = CompiledRead(
    Sale,
    lambda sale_id: Sale.objects.select_related(*catalogue.owner_paths()).filter(pk=sale_id)[:1],
    shape=lambda: tuple(catalogue.owner_paths()),
    sale_id=int,
)


def sale_of(booking: Booking) -> Sale:
    """The booking's sale with its catalogue item, for the catalogue's rules."""
    sale = _SALE_WITH_OWNER.first(sale_id=booking.sale_id)
    if sale is None:
        raise Sale.DoesNotExist(f"Sale {booking.sale_id} does not exist.")
    return sale
