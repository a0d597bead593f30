"""Paying for a hold, confirming it, refunding, cancelling with refund.

Rule of this module: a gateway call never runs inside a database transaction and never while
this process holds a row lock.  Each pay request is three steps: (1) a short transaction that
records the payment (and claims the Idempotency-Key), (2) the gateway call in autocommit,
(3) a short transaction that applies the result.  Locks follow the one lock order in
docs/architecture.md ("Lock order").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue
from bookings.errors import (
    BookingNotFound,
    HoldExpired,
    InvalidBookingState,
    PassengerNamesMissing,
    SaleClosed,
)
from bookings.lifecycle import close_bookings, sell_held_booking
from bookings.models import Booking, BookingStatus, Sale
from bookings.selectors import check_passengers_named
from kernel.idempotency import IdempotentResult, clean_key, fingerprint, replay
from kernel.locking import lock_errors_as_too_busy
from kernel.outbox import emit_event
from payments.currency import NotChargeable
from payments.errors import (
    AmountMismatch,
    BookingAlreadyCancelled,
    BookingNotPayable,
    CancellationRefused,
    GatewayError,
    GoodwillRefundNotAllowed,
    PaymentInProgress,
)
from payments.gateways import get_gateway
from payments.gateways.base import ChargeResult
from payments.models import (
    IN_FLIGHT_PAYMENT_STATUSES,
    Payment,
    PaymentStatus,
    Refund,
    RefundReason,
    RefundStatus,
)
from payments.selectors import RefundQuote, payment_response, quote_for

# What a pay request answers; a replay carries `replayed=True` (kernel.idempotency's rules).
PayResponse = IdempotentResult


def assert_no_transaction() -> None:
    """Guard in front of every gateway call: a network wait must never hold rows locked."""
    if connection.in_atomic_block:
        raise RuntimeError("Gateway calls must not run inside a database transaction.")


# --- paying --------------------------------------------------------------------------------------


def request_fingerprint(
    *, booking_id: int, amount: Decimal | None, currency: str | None, payment_method: str
) -> str:
    """What tells a replay from a different request under the same Idempotency-Key: a keyed
    HMAC (`kernel.idempotency.fingerprint`) under the payments' own key."""
    return fingerprint(
        {
            "bookingId": booking_id,
            "amount": None if amount is None else str(amount.quantize(Decimal("0.01"))),
            "currency": (currency or "").upper() or None,
            "paymentMethod": payment_method or None,
        },
        key=settings.PAYMENTS["FINGERPRINT_KEY"],
    )


def _replay(payment: Payment, request_fingerprint: str) -> PayResponse:
    return replay(
        stored_fingerprint=payment.request_fingerprint,
        response_status=payment.response_status,
        response_body=payment.response_body,
        request_fingerprint=request_fingerprint,
        what="payment",
    )


def _existing(customer: AbstractBaseUser, key: str) -> Payment | None:
    return Payment.objects.filter(customer=customer, idempotency_key=key).first()


def _record_payment(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    key: str,
    fingerprint: str,
    amount: Decimal | None,
    currency: str | None,
    payment_method: str = "",
    on_behalf: bool = False,
) -> Payment | PayResponse:
    """Step 1: claim the key and write the payment row, committed before the gateway hears of it."""
    existing = _existing(customer, key)
    if existing:
        return _replay(existing, fingerprint)
    now = timezone.now()
    with transaction.atomic():
        bookings = Booking.objects.all() if on_behalf else Booking.objects.filter(customer=customer)
        booking = bookings.filter(pk=booking_id).first()
        if booking is None:
            raise BookingNotFound()
        if booking.status == BookingStatus.EXPIRED or (
            booking.status == BookingStatus.HELD and booking.expires_at <= now
        ):
            raise HoldExpired()
        if booking.status != BookingStatus.HELD:
            raise BookingNotPayable(
                gettext("This booking is %(status)s; only a held booking can be paid.")
                % {"status": str(booking.get_status_display()).lower()}
            )
        sale = _sale_of(booking)
        seller = catalogue.for_sale(sale)
        if not seller.is_open(sale, now=now):
            # Nothing is charged: the seats could never be used.
            raise SaleClosed(str(seller.texts.not_charged), texts=seller.texts)
        # Named before paid, on every path (pages, API, hosted checkout, every gateway): a
        # waitlist offer or a seatless hold arrives without names.  Nothing is written.
        check_passengers_named(booking_id=booking.pk)
        if amount is not None and amount != booking.amount:
            raise AmountMismatch(
                gettext("The booking costs %(amount)s %(currency)s, not %(amount2)s.")
                % {"amount": booking.amount, "currency": booking.currency, "amount2": amount},
                amount=str(booking.amount),
                currency=booking.currency,
            )
        if currency and currency.upper() != booking.currency:
            raise AmountMismatch(
                gettext("The booking is priced in %(currency)s.") % {"currency": booking.currency},
                amount=str(booking.amount),
                currency=booking.currency,
            )
        try:
            with transaction.atomic():
                return Payment.objects.create(
                    booking=booking,
                    customer=customer,
                    idempotency_key=key,
                    request_fingerprint=fingerprint,
                    amount=booking.amount,
                    currency=booking.currency,
                    gateway=settings.PAYMENTS["GATEWAY"],
                    payment_method_token=get_gateway().storable_method(payment_method),
                    created_at=now,
                    updated_at=now,
                )
        except IntegrityError:
            # Either a concurrent request with the same key committed first (replay or 409),
            # or another attempt for this booking is still under way.
            pass
    existing = _existing(customer, key)
    if existing:
        return _replay(existing, fingerprint)
    other = Payment.objects.filter(
        booking_id=booking_id, status__in=IN_FLIGHT_PAYMENT_STATUSES
    ).first()
    raise PaymentInProgress(
        gettext("Another payment for this booking is under way; finish or abandon it first."),
        paymentId=other.pk if other else None,
        checkoutUrl=(other.checkout_url or None) if other else None,
    )


def _charge_params(payment: Payment, payment_method: str) -> dict[str, Any]:
    """The outbound call, identical every time for one payment: the gateway's idempotency
    key only replays a request with the same parameters."""
    return {
        "payment_id": payment.pk,
        "amount": payment.amount,
        "currency": payment.currency,
        "idempotency_key": f"seatkeeper-payment-{payment.pk}",
        "payment_method": payment_method,
        "description": f"Seatkeeper booking {payment.booking_id}",
        "return_url": settings.PUBLIC_BASE_URL.rstrip("/")
        + reverse("bookings:detail", args=[payment.booking_id]),
    }


def _charge(payment: Payment, payment_method: str) -> ChargeResult:
    """Step 2: the gateway call, in autocommit, holding nothing."""
    assert_no_transaction()
    try:
        return get_gateway(payment.gateway).create_payment(
            **_charge_params(payment, payment_method)
        )
    except GatewayError:
        return ChargeResult(status="failed", reference="", failure_reason="gateway_unavailable")
    except NotChargeable:
        # A price the catalogue check should have refused (edited in the database, or from
        # before the check): nothing is sent, rather than a rounded amount.
        return ChargeResult(status="failed", reference="", failure_reason="amount_not_chargeable")


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


def apply_charge_result(*, payment_id: int, result: ChargeResult) -> Payment:
    """Step 3.  Safe in any order with the webhook announcing the same outcome."""
    if result.status == "succeeded":
        return confirm_payment(payment_id=payment_id, reference=result.reference)
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


def _store_response(payment_id: int) -> PayResponse:
    payment = Payment.objects.get(pk=payment_id)
    status, body = payment_response(payment)
    Payment.objects.filter(pk=payment_id, response_status__isnull=True).update(
        response_status=status, response_body=body, updated_at=timezone.now()
    )
    stored = Payment.objects.values_list("response_status", "response_body").get(pk=payment_id)
    return PayResponse(*stored)


def pay_for_booking(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    idempotency_key: str | None,
    amount: Decimal | None = None,
    currency: str | None = None,
    payment_method: str = "",
    on_behalf: bool = False,
) -> PayResponse:
    """Pay for a held booking, exactly once per (customer, Idempotency-Key).

    `customer` is who pays and owns the key; with `on_behalf` (travel agents, staff) the
    booking may be another customer's."""
    key = clean_key(idempotency_key, required=True, what="payment")
    # Before anything is written: a raw card number for a real gateway, or an unknown one for
    # the sandbox, is refused (400) and never stored, fingerprinted or sent anywhere.
    payment_method = get_gateway().accept_payment_method(payment_method)
    asked = request_fingerprint(
        booking_id=booking_id, amount=amount, currency=currency, payment_method=payment_method
    )
    record = {
        "customer": customer,
        "booking_id": booking_id,
        "key": key,
        "fingerprint": asked,
        "amount": amount,
        "currency": currency,
        "payment_method": payment_method,
        "on_behalf": on_behalf,
    }
    try:
        recorded = _record_payment(**record)
    except PaymentInProgress as busy:
        # A new attempt replaces one left waiting at a hosted checkout (the customer closed
        # the tab, 3-D Secure never finished): cancelled at the gateway first, then retried.
        stuck = busy.extra.get("paymentId")
        if not stuck or not supersede_payment(payment_id=stuck):
            raise
        recorded = _record_payment(**record)
    if isinstance(recorded, PayResponse):
        return recorded
    result = _charge(recorded, payment_method)
    apply_charge_result(payment_id=recorded.pk, result=result)
    return _store_response(recorded.pk)


# --- applying outcomes ---------------------------------------------------------------------------


@lock_errors_as_too_busy
def confirm_payment(*, payment_id: int, reference: str = "") -> Payment:
    """The gateway says the money is ours.  Sell the held seats, or, when the hold is gone,
    keep the money only long enough to pay it back: nobody pays for a seat someone else got.
    A hold with a nameless passenger is not sold either (no ticket without a name): the money
    goes back and the hold stays for the customer to name and pay again."""
    with transaction.atomic():
        booking_id = Payment.objects.values_list("booking_id", flat=True).get(pk=payment_id)
        booking = Booking.objects.select_for_update().get(pk=booking_id)
        payment = Payment.objects.select_for_update().get(pk=payment_id)
        if payment.status in (
            PaymentStatus.SUCCEEDED,
            PaymentStatus.REFUND_REQUIRED,
            PaymentStatus.REFUNDED,
        ):
            return payment  # a duplicate of an outcome already applied
        now = timezone.now()
        reference = reference or payment.gateway_reference
        late_reason = RefundReason.LATE_PAYMENT
        if booking.status == BookingStatus.HELD and not catalogue.is_open(
            _sale_of(booking), now=now
        ):
            # The sale closed (the flight left, the event was cancelled...) while the
            # customer paid: the hold ends here,
            # its seats go back, and the money is paid back in full like a late payment.
            late_reason = RefundReason.FLIGHT_CLOSED
            close_bookings(
                [booking], from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=now
            )
        elif booking.status == BookingStatus.HELD and booking.expires_at <= now:
            # Expired but not yet swept: expire it ourselves so the seats go back now.
            close_bookings(
                [booking], from_status=BookingStatus.HELD, to_status=BookingStatus.EXPIRED, now=now
            )
        unnamed = booking.status == BookingStatus.HELD and not _named(booking)
        if unnamed:
            # Cannot happen for a payment started now (`_record_payment` refuses), only for
            # one started before names were required, or after a row was edited by hand.  No
            # nameless ticket is issued: the money goes back in full and the hold stays, so
            # the customer can name the passengers and pay again before it expires.
            late_reason = RefundReason.NAMES_MISSING
        if booking.status == BookingStatus.HELD and not unnamed:
            sell_held_booking(
                booking,
                now=now,
                payment={
                    "paymentId": payment.pk,
                    "amount": str(payment.amount),
                    "currency": payment.currency,
                },
            )
            Payment.objects.filter(pk=payment_id).update(
                status=PaymentStatus.SUCCEEDED,
                gateway_reference=reference,
                failure_reason="",
                succeeded_at=now,
                updated_at=now,
            )
        else:
            Payment.objects.filter(pk=payment_id).update(
                status=PaymentStatus.REFUND_REQUIRED,
                gateway_reference=reference,
                succeeded_at=now,
                updated_at=now,
            )
            _create_refund(payment, amount=payment.amount, reason=late_reason, now=now)
    return Payment.objects.get(pk=payment_id)


def _named(booking: Booking) -> bool:
    try:
        check_passengers_named(booking_id=booking.pk)
    except PassengerNamesMissing:
        return False
    return True


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


# --- refunds -------------------------------------------------------------------------------------


def _create_refund(
    payment: Payment, *, amount: Decimal, reason: str, now: datetime, **audit: Any
) -> Refund:
    """`audit`: approved_by, goodwill, policy_amount (a staff cancellation's record)."""
    refund = Refund.objects.create(
        payment=payment,
        amount=amount,
        currency=payment.currency,
        reason=reason,
        created_at=now,
        **audit,
    )
    transaction.on_commit(lambda: queue_refund(refund_id=refund.pk))
    return refund


def queue_refund(*, refund_id: int) -> None:
    from payments.tasks import issue_refund_task

    issue_refund_task.delay(refund_id)


def requeue_stale_refunds(
    *, now: datetime | None = None, grace: timedelta = timedelta(minutes=10)
) -> int:
    """Safety net for refunds whose task was lost (broker restart): queue again every refund
    still PENDING after `grace`.  Sending twice is harmless: the outbound idempotency key and
    the conditional PENDING -> SUCCEEDED update in `issue_refund` make it so."""
    cutoff = (now or timezone.now()) - grace
    stale = list(
        Refund.objects.filter(status=RefundStatus.PENDING, created_at__lt=cutoff).values_list(
            "pk", flat=True
        )
    )
    for refund_id in stale:
        queue_refund(refund_id=refund_id)
    return len(stale)


def issue_refund(*, refund_id: int) -> Refund:
    """Send a pending refund through the payment's gateway, then record it with its outbox row.

    Raises GatewayError when the gateway cannot be reached (the task retries with backoff);
    the outbound idempotency key makes a retry after an unknown outcome harmless."""
    refund = Refund.objects.select_related("payment").get(pk=refund_id)
    if refund.status != RefundStatus.PENDING:
        return refund
    payment = refund.payment
    assert_no_transaction()
    result = get_gateway(payment.gateway).refund(
        reference=payment.gateway_reference,
        amount=refund.amount,
        currency=refund.currency,
        idempotency_key=f"seatkeeper-refund-{refund.pk}",
    )
    now = timezone.now()
    with transaction.atomic():
        if not result.succeeded:
            Refund.objects.filter(pk=refund_id, status=RefundStatus.PENDING).update(
                status=RefundStatus.FAILED,
                failure_reason=result.failure_reason[:200],
                completed_at=now,
            )
            return Refund.objects.get(pk=refund_id)
        won = Refund.objects.filter(pk=refund_id, status=RefundStatus.PENDING).update(
            status=RefundStatus.SUCCEEDED, gateway_reference=result.reference, completed_at=now
        )
        if won:
            payment = Payment.objects.select_for_update().get(pk=payment.pk)
            refunded = payment.refunded_amount + refund.amount
            fully = refunded == payment.amount or payment.status == PaymentStatus.REFUND_REQUIRED
            Payment.objects.filter(pk=payment.pk).update(
                refunded_amount=refunded,
                updated_at=now,
                status=PaymentStatus.REFUNDED if fully else payment.status,
            )
            sale_id = Booking.objects.values_list("sale_id", flat=True).get(pk=payment.booking_id)
            emit_event(
                aggregate_type="booking",
                aggregate_id=payment.booking_id,
                event_type="refund.issued",
                payload={
                    # The engine's sale only: partners add flightId / eventId from the
                    # catalogue (partners.services.public_payload).
                    "bookingId": payment.booking_id,
                    "saleId": sale_id,
                    "refundId": refund.pk,
                    "paymentId": payment.pk,
                    "amount": str(refund.amount),
                    "currency": refund.currency,
                    "reason": refund.reason,
                },
            )
    return Refund.objects.get(pk=refund_id)


# --- cancellation --------------------------------------------------------------------------------


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
        booking = bookings.select_for_update().filter(pk=booking_id).first()
        if booking is None:
            raise BookingNotFound()
        if booking.status == BookingStatus.CANCELLED:
            raise BookingAlreadyCancelled(gettext("This booking was already cancelled."))
        if booking.status == BookingStatus.EXPIRED:
            raise HoldExpired(gettext("This hold had already expired; its seats are released."))
        if booking.status not in (BookingStatus.HELD, BookingStatus.CONFIRMED):
            raise InvalidBookingState(
                gettext("A %(status)s booking cannot be cancelled.")
                % {"status": str(booking.get_status_display()).lower()}
            )
        payment = (
            Payment.objects.select_for_update()
            .filter(booking=booking, status=PaymentStatus.SUCCEEDED)
            .first()
            if booking.status == BookingStatus.CONFIRMED
            else None
        )
        now = timezone.now()
        booking.sale = _sale_of(booking)
        quote = quote_for(booking=booking, payment=payment, now=now)
        if not quote.cancellable:
            raise CancellationRefused(quote.reason)
        close_bookings(
            [booking], from_status=booking.status, to_status=BookingStatus.CANCELLED, now=now
        )
        amount = quote.paid if goodwill else quote.amount
        if payment and amount > 0:
            refund = _create_refund(
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


# --- reconciliation -----------------------------------------------------------------------------


def reconcile_payment(*, payment_id: int) -> Payment:
    """Settle a payment left PROCESSING by a crash between its steps: ask the gateway by our
    outbound idempotency key where the charge stands, apply that, and store the answer its
    Idempotency-Key replays from now on (instead of 409 "still running" forever)."""
    payment = Payment.objects.get(pk=payment_id)
    if payment.status != PaymentStatus.PROCESSING:
        return payment
    assert_no_transaction()
    try:
        result = get_gateway(payment.gateway).reconcile(
            **_charge_params(payment, payment.payment_method_token)
        )
    except GatewayError:
        return payment  # the next beat tick asks again
    apply_charge_result(payment_id=payment.pk, result=result)
    _store_response(payment.pk)
    return Payment.objects.get(pk=payment_id)


def reconcile_stuck_payments(*, now: datetime | None = None, limit: int = 100) -> int:
    """Beat job: every payment PROCESSING for longer than any request can take, and every
    PENDING one (a hosted checkout, 3-D Secure) whose hold is over.  A PENDING payment is
    cancelled at the gateway, or, when the customer paid after all, that success is applied
    (and refunded, the hold being gone): money is never left captured with nobody to say so."""
    now = now or timezone.now()
    cutoff = now - settings.PAYMENTS["RECONCILE_AFTER"]
    stuck = list(
        Payment.objects.filter(status=PaymentStatus.PROCESSING, updated_at__lt=cutoff)
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    for payment_id in stuck:
        reconcile_payment(payment_id=payment_id)
    lapsed = list(
        Payment.objects.filter(status=PaymentStatus.PENDING, updated_at__lt=cutoff)
        .filter(~Q(booking__status=BookingStatus.HELD) | Q(booking__expires_at__lt=now))
        .order_by("updated_at")
        .values_list("pk", flat=True)[:limit]
    )
    for payment_id in lapsed:
        supersede_payment(payment_id=payment_id)
    return len(stuck) + len(lapsed)


# --- housekeeping --------------------------------------------------------------------------------


def purge_idempotency_keys(*, now: datetime | None = None) -> int:
    """Forget keys older than the retention period (at least 24 h; see docs/payments.md)."""
    cutoff = (now or timezone.now()) - settings.PAYMENTS["IDEMPOTENCY_KEY_RETENTION"]
    with transaction.atomic():
        return Payment.objects.filter(
            idempotency_key__isnull=False, created_at__lt=cutoff, response_status__isnull=False
        ).update(idempotency_key=None)


def _sale_of(booking: Booking) -> Sale:
    """The booking's sale with its catalogue item, for the catalogue's rules."""
    return Sale.objects.select_related(*catalogue.owner_paths()).get(pk=booking.sale_id)
