"""Resale through the waitlist, the money side (issue 29, item 4): the fee staff set on the
refund policy, and the seller's refund, created in the buyer's confirmation transaction and
sent through the refund path (payments.refunds: after commit, with its idempotency key).
The engine side (offers, hand-over, withdrawal) is bookings.resale."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser

from bookings import resale as engine
from bookings.errors import BookingNotFound
from bookings.models import Booking, Resale
from payments.models import Payment, PaymentStatus, Refund, RefundReason
from payments.refunds import create_refund
from payments.selectors import refund_policy_for, sale_of


def list_booking_for_resale(
    *, customer: AbstractBaseUser, booking_id: int, ticket_ids: Sequence[int] | None = None
) -> Resale:
    """List the customer's booking for resale (the tickets `ticket_ids`, or all), with the
    fee of its refund policy (the most specific one: sale and class, sale, catalogue and
    class, catalogue), fixed now."""
    booking = Booking.objects.filter(pk=booking_id, customer=customer).first()
    if booking is None:
        raise BookingNotFound()
    policy = refund_policy_for(sale=sale_of(booking), fare_class=booking.fare_class)
    return engine.list_for_resale(
        customer=customer,
        booking_id=booking_id,
        fee_percent=policy.resale_fee_percent,
        ticket_ids=ticket_ids,
    )


def refund_seller(*, resale: Resale, now: datetime) -> Refund | None:
    """The tickets of `resale` were just paid for by the buyer (the caller's transaction,
    which holds the seller's booking lock): refund the seller's payment, less the fee."""
    payment = (
        Payment.objects.select_for_update()
        .filter(booking_id=resale.booking_id, status=PaymentStatus.SUCCEEDED)
        .order_by("id")
        .first()
    )
    if payment is None:
        return None  # a booking nobody paid for (free tickets): nothing to give back
    amount = min(resale.face_value - resale.fee, payment.amount - payment.refunded_amount)
    if amount <= Decimal(0):
        return None
    return create_refund(payment, amount=amount, reason=RefundReason.RESALE, now=now, resale=resale)
