"""Cancelling a booking, with the refund its policy (or staff goodwill) grants."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from bookings import resale_selectors
from bookings.errors import BookingNotFound, ResaleListed
from bookings.lifecycle import close_bookings
from bookings.models import Booking, BookingStatus
from kernel.locking import lock_errors_as_too_busy
from payments.errors import BookingAlreadyCancelled, CancellationRefused, GoodwillRefundNotAllowed
from payments.models import Payment, PaymentStatus, Refund, RefundReason
from payments.refunds import create_refund
from payments.selectors import RefundQuote, quote_for, sale_of

GOODWILL_REFUND = "payments.refund_goodwill"


def may_refund_goodwill(user: AbstractBaseUser) -> bool:
    """Whether `user` may override the refund policy with a full refund (its own permission,
    apart from the permission to cancel)."""
    return bool(user.is_authenticated and user.is_staff and user.has_perm(GOODWILL_REFUND))


def check_may_refund_goodwill(*, user: AbstractBaseUser, by_staff: bool = True) -> None:
    if not (by_staff and may_refund_goodwill(user)):
        raise GoodwillRefundNotAllowed()


@dataclass(frozen=True)
class Cancellation:
    booking: Booking
    quote: RefundQuote
    refund: Refund | None


@lock_errors_as_too_busy
def cancel_booking(
    *, customer: AbstractBaseUser, booking_id: int, by_staff: bool = False, goodwill: bool = False
) -> Cancellation:
    """Cancel a booking: a hold is simply released; a confirmed booking gives its seats and
    `sold` units back and is refunded by its fare class's policy.  Refused after departure.

    One transaction, one call into the engine (`close_bookings`), whatever the state: the
    booking row is locked first, then the payment (docs/architecture.md, "Lock order"), and
    the refund is decided in the same transaction as the cancellation.

    With `by_staff`, `customer` is the staff member acting, recorded on the refund as who
    approved it.  `goodwill` refunds everything paid instead of the policy's amount; only
    staff with GOODWILL_REFUND may grant it (GoodwillRefundNotAllowed, nothing changes)."""
    if goodwill:
        check_may_refund_goodwill(user=customer, by_staff=by_staff)
    bookings = Booking.objects.all() if by_staff else Booking.objects.filter(customer=customer)
    refund = None
    with transaction.atomic():
        booking = _lock_cancellable(bookings, booking_id=booking_id)
        payment = (
            Payment.objects.select_for_update()
            .filter(booking=booking, status=PaymentStatus.SUCCEEDED)
            .first()
            if booking.status == BookingStatus.CONFIRMED
            else None
        )
        now = timezone.now()
        booking.sale = sale_of(booking)
        quote = quote_for(booking=booking, payment=payment, now=now)
        if not quote.cancellable:
            raise CancellationRefused(quote.reason)
        close_bookings(
            [booking], from_status=booking.status, to_status=BookingStatus.CANCELLED, now=now
        )
        amount = quote.paid if goodwill else quote.amount
        if payment and amount > 0:
            refund = create_refund(
                payment,
                amount=amount,
                reason=RefundReason.CANCELLATION,
                now=now,
                approved_by=customer if by_staff else None,
                goodwill=goodwill,
                policy_amount=quote.amount if goodwill else None,
            )
    if refund:
        refund.refresh_from_db()
    return Cancellation(booking, quote, refund)


def _lock_cancellable(bookings, *, booking_id: int) -> Booking:
    """The booking, row-locked, if its state lets it be cancelled (Booking.check_cancellable,
    the rule `cancel_hold` shares); a second cancellation is told so."""
    booking = bookings.select_for_update().filter(pk=booking_id).first()
    if booking is None:
        raise BookingNotFound()
    if booking.status == BookingStatus.CANCELLED:
        raise BookingAlreadyCancelled(gettext("This booking was already cancelled."))
    booking.check_cancellable(
        statuses=(BookingStatus.HELD, BookingStatus.CONFIRMED),
        refused=gettext("A %(status)s booking cannot be cancelled."),
    )
    # Read under the booking's lock, which every change of a resale's listing takes: a
    # buyer paying right now cannot have the seller refunded twice (tests/bookings/
    # test_resale_races.py).
    if resale_selectors.active_resale(booking_id=booking.pk) is not None:
        raise ResaleListed(
            gettext("These tickets are listed for resale: withdraw the resale to cancel.")
        )
    return booking
