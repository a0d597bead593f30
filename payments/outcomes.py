"""Applying what the gateway says about a payment (step 3 of payments.charging's rule): a
charge result, a webhook, a cancelled hosted checkout.  Each is safe in any order with the
others announcing the same outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Model, OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue, resale
from bookings.errors import InvalidBookingState
from bookings.lifecycle import close_bookings, passengers_to_sell, sell_held_booking
from bookings.models import Booking, BookingStatus, Resale, ResaleStatus, WaitlistEntry
from bookings.selectors import live_passengers_named
from kernel.compiled import CompiledRead
from kernel.locking import lock_errors_as_too_busy
from payments.charging import assert_no_transaction
from payments.errors import GatewayError
from payments.gateways import get_gateway
from payments.gateways.base import ChargeResult
from payments.models import IN_FLIGHT_PAYMENT_STATUSES, Payment, PaymentStatus, RefundReason
from payments.refunds import create_refund
from payments.resale import refund_seller

# A payment in one of these has had its success applied already: a duplicate changes nothing.
SETTLED_PAYMENT_STATUSES = (
    PaymentStatus.SUCCEEDED,
    PaymentStatus.REFUND_REQUIRED,
    PaymentStatus.REFUNDED,
)


def apply_charge_result(
    *, payment_id: int, result: ChargeResult, booking_id: int | None = None
) -> Payment:
    """Step 3.  Safe in any order with the webhook announcing the same outcome.  `booking_id`:
    the payment's booking, when the caller has it (see `confirm_payment`)."""
    if result.status == "succeeded":
        return confirm_payment(
            payment_id=payment_id, reference=result.reference, booking_id=booking_id
        )
    if result.status == "failed":
        return fail_payment(
            payment_id=payment_id, reference=result.reference, reason=result.failure_reason
        )
    with transaction.atomic():
        Payment.objects.filter(pk=payment_id, status=PaymentStatus.PROCESSING).update(
            status=PaymentStatus.PENDING,
            gateway_reference=result.reference,
            checkout_url=result.checkout_url,
            client_secret=result.client_secret,
            updated_at=timezone.now(),
        )
    return Payment.objects.get(pk=payment_id)


@lock_errors_as_too_busy
def confirm_payment(
    *, payment_id: int, reference: str = "", booking_id: int | None = None
) -> Payment:
    """The gateway says the money is ours.  Sell the held seats, or, when the hold is gone,
    keep the money only long enough to pay it back: nobody pays for a seat someone else got.
    A hold with a nameless passenger is not sold either (no ticket without a name): the money
    goes back and the hold stays for the customer to name and pay again.

    `booking_id` is the payment's booking when the caller already has it (a payment never
    changes booking), which saves reading it; the locks are the same either way.

    A payment this call sells comes back carrying `current_booking_status` (CONFIRMED), as
    `payments.selectors.payment_with_booking_status` reads it: the pay request answers from
    it without reading either again (`payments.charging.store_response`)."""
    with transaction.atomic():
        if booking_id is None:
            booking_id = Payment.objects.values_list("booking_id", flat=True).get(pk=payment_id)
        # Booking, then payment: the one lock order (docs/architecture.md).  The booking's
        # lock reads its sale too (not locked), for the sale's rules below.
        booking = _locked(_LOCKED_BOOKING, Booking, booking_id=booking_id)
        now = timezone.now()
        # Reads only: nothing is written before the payment says it is not a duplicate.
        refund_reason, close, resale_offer, passengers = _why_not_sellable(booking, now=now)
        if refund_reason is None:
            # The payment's lock, its checks and its transition in one guarded UPDATE: it
            # wins unless the payment is settled already, or is another booking's.
            payment = _mark_succeeded(
                payment_id, booking_id=booking_id, reference=reference, now=now
            )
            if payment is not None:
                _sell(booking, payment, now=now, resale_offer=resale_offer, passengers=passengers)
                payment.current_booking_status = booking.status
                # The row as the UPDATE left it, i.e. what this confirmation did (a later
                # change, such as a cancellation, is its own request's to report).
                return payment
        payment = _locked(_LOCKED_PAYMENT, Payment, payment_id=payment_id)
        if payment.status in SETTLED_PAYMENT_STATUSES:
            return payment  # a duplicate of an outcome already applied
        if payment.booking_id != booking_id:
            raise ValueError(f"payment {payment_id} is not booking {booking_id}'s")
        if refund_reason is None:  # the guarded UPDATE above would have taken it
            raise InvalidBookingState(gettext("The payment changed state concurrently."))
        if close:
            _expire(booking, now=now)
        _keep_to_refund(
            payment,
            reference=reference or payment.gateway_reference,
            reason=refund_reason,
            now=now,
        )
    # A refund is queued on commit and may already have changed the row.
    return Payment.objects.get(pk=payment_id)


# Compiled once per connection (kernel.compiled): every confirmation takes this lock.  The
# booking's row only (FOR UPDATE OF it: its sale and the sale's catalogue item are read, not
# locked, for `_why_not_sellable`), with `offer_resale_id`, the resale naming it as its offer,
# and `offer_entry_id`, the waitlist entry naming it as its offer (None: none), in the same
# statement (tests/payments/test_pay_record_step.py compares them with the ORM).
_LOCKED_BOOKING = CompiledRead(
    Booking,
    lambda booking_id: (
        Booking.objects.select_for_update(of=("self",))
        .select_related("sale", *catalogue.owner_paths("sale__"))
        .annotate(
            offer_resale_id=Subquery(
                Resale.objects.filter(offer_id=OuterRef("pk")).values("pk")[:1]
            ),
            offer_entry_id=Subquery(
                WaitlistEntry.objects.filter(offer_id=OuterRef("pk")).values("pk")[:1]
            ),
        )
        .filter(pk=booking_id)[:1]
    ),
    shape=lambda: tuple(catalogue.owner_paths()),
    booking_id=int,
)
# ...and the payment's, on the paths that read it (a duplicate, a refund).
_LOCKED_PAYMENT = CompiledRead(
    Payment,
    lambda payment_id: Payment.objects.select_for_update().filter(pk=payment_id)[:1],
    payment_id=int,
)


def _locked(read: CompiledRead, model: type[Model], **pk: int) -> Any:
    """`model`'s row by primary key, locked (FOR UPDATE) on the primary; DoesNotExist as
    `.get()` would say."""
    found = read.first(using=router.db_for_write(model), **pk)
    if found is None:
        raise model.DoesNotExist(f"{model.__name__} {pk} does not exist.")
    return found


def _why_not_sellable(
    booking: Booking, *, now: datetime
) -> tuple[str | None, bool, bool, list[tuple[int, str, str | None, bool]] | None]:
    """Why the paid `booking` (locked) cannot be sold, as the refund's reason; None: it can.
    Second: whether the hold must be closed first (its sale closed, its time ran out, its
    resale offer was let go), so its seats go back now.  Third: whether the booking is a
    resale offer (False only when read to be none).  Fourth: its passengers
    (`passengers_to_sell`), when read to check their names.  Reads only: the caller writes,
    once it knows the payment is no duplicate."""
    if booking.status != BookingStatus.HELD:
        return RefundReason.LATE_PAYMENT, False, True, None
    if not catalogue.is_open(booking.sale, now=now):
        # The sale closed (the flight left, the event was cancelled...) while the customer
        # paid: the hold ends, its seats go back, and the money is paid back in full like a
        # late payment.
        return RefundReason.FLIGHT_CLOSED, True, True, None
    if booking.hold_lapsed(now):
        # Expired but not yet swept: expired by the caller, so the seats go back now.
        return RefundReason.LATE_PAYMENT, True, True, None
    # The lock's read said whether a resale names this booking as its offer.  None stays
    # None (`resale.offer_resale_status`), so only an offer's resale is read again, now.
    offered = resale.offer_resale_status(booking) if booking.offer_resale_id else None
    resale_offer = offered is not None
    if resale_offer and offered != ResaleStatus.OFFERED:
        # A resale offer whose seller withdrew (or whose booking was closed) meanwhile.
        return RefundReason.LATE_PAYMENT, True, resale_offer, None
    # Read once, under the booking's lock: the names' check here and who travels in
    # `booking.confirmed` (`sell_held_booking`) are the same rows.
    passengers = passengers_to_sell(booking_id=booking.pk)
    if not live_passengers_named(passengers):
        # Cannot happen for a payment started now (`payments.paying` refuses), only for one
        # started before names were required, or after a row was edited by hand.  No
        # nameless ticket is issued: the money goes back in full and the hold stays, so
        # the customer can name the passengers and pay again before it expires.
        return RefundReason.NAMES_MISSING, False, resale_offer, None
    return None, False, resale_offer, passengers


def _expire(booking: Booking, *, now: datetime) -> None:
    close_bookings(
        [booking], from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=now
    )


def _sell(
    booking: Booking,
    payment: Payment,
    *,
    now: datetime,
    resale_offer: bool,
    passengers: list[tuple[int, str, str | None, bool]] | None,
) -> None:
    # The payment's row is written first (`_mark_succeeded`, booking, then payment): the
    # sale's hot fare-inventory row is held for less, only from its UPDATE, the sale's last
    # statements, to COMMIT (`sell_held_booking`).  A sale that fails rolls it back with it.
    resold = sell_held_booking(
        booking,
        now=now,
        payment={
            "paymentId": payment.pk,
            "amount": str(payment.amount),
            "currency": payment.currency,
        },
        resale_offer=resale_offer,
        passengers=passengers,
        # None stays None (`waitlist.mark_offer_booked`): no entry, no UPDATE to send.
        waitlist_offer=booking.offer_entry_id is not None,
    )
    # Resold tickets: their seller is refunded in this transaction, never before it.
    if resold is not None:
        refund_seller(resale=resold, now=now)


def _mark_succeeded(
    payment_id: int, *, booking_id: int, reference: str, now: datetime
) -> Payment | None:
    """The payment, locked and made SUCCEEDED (its gateway reference kept when `reference`
    is empty), as the UPDATE left it; None, changing nothing, when it is settled already, is
    another booking's or does not exist: the caller reads it to tell which."""
    db = connections[router.db_for_write(Payment)]
    when = db.ops.adapt_datetimefield_value(now)
    params = [
        PaymentStatus.SUCCEEDED,
        reference or None,
        "",
        when,
        when,
        booking_id,
        payment_id,
        *SETTLED_PAYMENT_STATUSES,
    ]
    found = _LOCKED_PAYMENT.returned(_PAYMENT_SUCCEEDED_SQL, params, using=db.alias)
    return found[0] if found else None


# What `Payment.objects.filter(pk=..., booking_id=...).exclude(status__in=SETTLED_PAYMENT_
# STATUSES).update(status=, gateway_reference=Coalesce(reference, F("gateway_reference")),
# failure_reason=, succeeded_at=, updated_at=)` sends, returning the columns `_LOCKED_PAYMENT`
# reads, in its order (tests/payments/test_pay_compiled_reads.py), without compiling it again
# for every payment: the payment's lock read and its UPDATE in one round trip.
_PAYMENT_TABLE = Payment._meta.db_table
_PAYMENT_SUCCEEDED_SQL = (
    f'UPDATE "{_PAYMENT_TABLE}" SET "status" = %s, '
    f'"gateway_reference" = COALESCE(%s, "{_PAYMENT_TABLE}"."gateway_reference"), '
    f'"failure_reason" = %s, "succeeded_at" = %s, "updated_at" = %s '
    f'WHERE ("{_PAYMENT_TABLE}"."booking_id" = %s AND "{_PAYMENT_TABLE}"."id" = %s '
    f'AND NOT ("{_PAYMENT_TABLE}"."status" IN (%s, %s, %s))) RETURNING '
    + ", ".join(f'"{_PAYMENT_TABLE}"."{f.column}"' for f in Payment._meta.concrete_fields)
)


def _keep_to_refund(payment: Payment, *, reference: str, reason: str, now: datetime) -> None:
    Payment.objects.filter(pk=payment.pk).update(
        status=PaymentStatus.REFUND_REQUIRED,
        gateway_reference=reference,
        succeeded_at=now,
        updated_at=now,
    )
    create_refund(payment, amount=payment.amount, reason=reason, now=now)


def fail_payment(*, payment_id: int, reference: str = "", reason: str = "") -> Payment:
    """A decline.  Only a payment under way can fail: a late failure never undoes a success."""
    with transaction.atomic():
        updates: dict[str, Any] = {
            "status": PaymentStatus.FAILED,
            "failure_reason": reason[:200],
            "updated_at": timezone.now(),
        }
        if reference:
            updates["gateway_reference"] = reference
        Payment.objects.filter(pk=payment_id, status__in=IN_FLIGHT_PAYMENT_STATUSES).update(
            **updates
        )
    return Payment.objects.get(pk=payment_id)


def supersede_payment(*, payment_id: int) -> bool:
    """Abandon a payment left waiting for the customer (PENDING), so a new attempt can start.

    The gateway cancels it first, so it can never be paid later: no double charge.  If the
    customer had paid it after all, that success is applied instead (the booking is confirmed
    and the new attempt then finds nothing to pay).  False when it cannot be settled now (it
    is PROCESSING, i.e. a request is running, or the gateway cannot say)."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status != PaymentStatus.PENDING:
        return False
    assert_no_transaction()
    try:
        result = get_gateway(payment.gateway).cancel_payment(reference=payment.gateway_reference)
    except GatewayError:
        return False
    if result.status == "succeeded":
        confirm_payment(payment_id=payment.pk, reference=result.reference)
    elif result.status == "failed":
        fail_payment(payment_id=payment.pk, reason="superseded by a new payment attempt")
    else:
        return False
    return True
