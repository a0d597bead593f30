"""Paying for a hold, exactly once per (customer, Idempotency-Key) within the booking's sale:
record the payment, call the gateway, apply the result (the three steps of payments.charging's
rule).  The key is the customer's within one sale, so a cluster distributed by sale checks it
on the sale's node (docs/performance.md, "Beyond one primary"); the pay request names its
booking, so the sale is known before the transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from bookings import catalogue
from bookings.errors import BookingNotFound, HoldExpired, SaleClosed
from bookings.models import Booking, BookingStatus
from bookings.selectors import check_passengers_named
from kernel.compiled import CompiledRead
from kernel.compiled_inserts import CompiledInsert
from kernel.idempotency import clean_key, fingerprint, replay
from payments.charging import PayResponse, charge, store_response
from payments.errors import AmountMismatch, BookingNotPayable, PaymentInProgress
from payments.gateways import get_gateway
from payments.models import IN_FLIGHT_PAYMENT_STATUSES, Payment
from payments.outcomes import apply_charge_result, supersede_payment


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


def pay_for_booking(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    idempotency_key: str | None,
    amount: Decimal | None = None,
    currency: str | None = None,
    payment_method: str = "",
    on_behalf: bool | Callable[[], bool] = False,
) -> PayResponse:
    """Pay for a held booking, exactly once per (customer, Idempotency-Key).

    `customer` is who pays and owns the key; with `on_behalf` (travel agents, staff) the
    booking may be another customer's.  A callable `on_behalf` is asked only for a booking
    that is not the customer's own: the permission check it stands for costs two queries,
    and nearly every payment is for one's own booking."""
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
        recorded = record_payment(**record)
    except PaymentInProgress as busy:
        # A new attempt replaces one left waiting at a hosted checkout (the customer closed
        # the tab, 3-D Secure never finished): cancelled at the gateway first, then retried.
        stuck = busy.extra.get("paymentId")
        if not stuck or not supersede_payment(payment_id=stuck):
            raise
        recorded = record_payment(**record)
    if isinstance(recorded, PayResponse):
        return recorded
    result = charge(recorded, payment_method)
    applied = apply_charge_result(
        payment_id=recorded.pk, result=result, booking_id=recorded.booking_id
    )
    return store_response(recorded.pk, known=applied)


def record_payment(
    *,
    customer: AbstractBaseUser,
    booking_id: int,
    key: str,
    fingerprint: str,
    amount: Decimal | None,
    currency: str | None,
    payment_method: str = "",
    on_behalf: bool | Callable[[], bool] = False,
) -> Payment | PayResponse:
    """Step 1: claim the key and write the payment row, committed before the gateway hears of
    it.  A key already used in the booking's sale answers its stored response (or 422: a
    different request)."""
    # Read once, for its sale (the key's scope) and for the checks below: nothing locks it
    # here, so reading it inside the transaction would see nothing more.  The same statement
    # says whether the key is used in that sale already (the payment itself is read only
    # then: a replay), so a new payment starts with one round trip, not two.
    booking = _BOOKING_AND_KEY.first(booking_id=booking_id, customer_id=customer.pk, key=key)
    if booking is not None and booking.keyed_payment_id is not None:
        existing = _existing(customer, booking.sale_id, key)
        if existing:
            return _replay(existing, fingerprint)
    now = timezone.now()
    # The checks write nothing and lock nothing, so they read as well outside a transaction
    # (each statement sees what is committed when it runs, as it would inside one under READ
    # COMMITTED); a refusal raises before anything is written.
    _check_payable(booking, customer=customer, on_behalf=on_behalf, now=now)
    _check_amount(booking, amount=amount, currency=currency)
    try:
        with _one_write():
            return _insert_payment(
                booking,
                customer=customer,
                key=key,
                fingerprint=fingerprint,
                payment_method=payment_method,
                now=now,
            )
    except IntegrityError:
        # A unique constraint refused the row, the only write (in autocommit nothing is left
        # to roll back; in a caller's transaction, its savepoint): see `_lost_the_claim`.
        pass
    return _lost_the_claim(
        customer=customer,
        sale_id=booking.sale_id,
        booking_id=booking_id,
        key=key,
        asked=fingerprint,
    )


def _one_write():
    """Where the payment's INSERT runs: on its own in autocommit, a transaction by itself
    (BEGIN and COMMIT around one statement were two more round trips of every pay request);
    inside a caller's transaction, in a savepoint, so a refused INSERT leaves that usable."""
    if transaction.get_connection().in_atomic_block:
        return transaction.atomic()
    return contextlib.nullcontext()


# Compiled once per connection (kernel.compiled): the read every pay request starts with,
# the booking (`Booking.objects.filter(pk=...).first()`, the model's ordering) and, in
# `keyed_payment_id`, the payment `_PAYMENT_BY_KEY` would find in the booking's sale (None:
# the key is new there), with its sale and the sale's catalogue item (`sale_of`'s, for
# `_check_payable`: joined here, not a read of their own); tests/payments/
# test_pay_record_step.py compares them with the ORM.
_BOOKING_AND_KEY = CompiledRead(
    Booking,
    lambda booking_id, customer_id, key: (
        Booking.objects.select_related("sale", *catalogue.owner_paths("sale__"))
        .annotate(
            keyed_payment_id=Subquery(
                Payment.objects.filter(
                    sale_id=OuterRef("sale_id"), customer_id=customer_id, idempotency_key=key
                ).values("pk")[:1]
            )
        )
        .filter(pk=booking_id)[:1]
    ),
    shape=lambda: tuple(catalogue.owner_paths()),
    booking_id=int,
    customer_id=int,
    key=str,
)
_PAYMENT_BY_KEY = CompiledRead(
    Payment,
    lambda sale_id, customer_id, key: Payment.objects.filter(
        sale_id=sale_id, customer_id=customer_id, idempotency_key=key
    )[:1],
    sale_id=int,
    customer_id=int,
    key=str,
)


def _existing(customer: AbstractBaseUser, sale_id: int | None, key: str) -> Payment | None:
    if sale_id is None:
        return None
    return _PAYMENT_BY_KEY.first(sale_id=sale_id, customer_id=customer.pk, key=key)


def _replay(payment: Payment, request_fingerprint: str) -> PayResponse:
    if payment.response_status is None and payment.status not in IN_FLIGHT_PAYMENT_STATUSES:
        # Settled, but the process died between applying the outcome and storing the answer
        # (step 3): nothing would ever store it (reconciliation only looks at PROCESSING), so
        # the key would answer "still running" forever.  The answer follows from the settled
        # row, and the first writer wins, so storing it here is what the dead request would
        # have stored.  A different request with this key still gets 422 below.
        stored = store_response(payment.pk)
        payment.response_status, payment.response_body = stored.status, stored.body
    return replay(
        stored_fingerprint=payment.request_fingerprint,
        response_status=payment.response_status,
        response_body=payment.response_body,
        request_fingerprint=request_fingerprint,
        what="payment",
    )


def _check_payable(
    booking: Booking | None,
    *,
    customer: AbstractBaseUser,
    on_behalf: bool | Callable[[], bool],
    now: datetime,
) -> None:
    """Nothing, when `customer` may pay `booking` now; else the domain error saying why not.
    Another customer's booking is one only an agent may pay, and is otherwise not found (as
    if it did not exist).  Writes nothing."""
    if booking is None:
        raise BookingNotFound()
    if booking.customer_id != customer.pk and not (
        on_behalf() if callable(on_behalf) else on_behalf
    ):
        raise BookingNotFound()
    if booking.status == BookingStatus.EXPIRED or booking.hold_lapsed(now):
        raise HoldExpired()
    if booking.status != BookingStatus.HELD:
        raise BookingNotPayable(
            gettext("This booking is %(status)s; only a held booking can be paid.")
            % {"status": str(booking.get_status_display()).lower()}
        )
    sale = booking.sale  # read with the booking (`_BOOKING_AND_KEY`)
    seller = catalogue.for_sale(sale)
    if not seller.is_open(sale, now=now):
        # Nothing is charged: the seats could never be used.
        raise SaleClosed(str(seller.texts.not_charged), texts=seller.texts)
    # Named before paid, on every path (pages, API, hosted checkout, every gateway): a
    # waitlist offer or a seatless hold arrives without names.  Nothing is written.
    check_passengers_named(booking_id=booking.pk)


def _check_amount(booking: Booking, *, amount: Decimal | None, currency: str | None) -> None:
    """The client may state what it expects to pay; a different amount or currency is refused."""
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


def _insert_payment(
    booking: Booking,
    *,
    customer: AbstractBaseUser,
    key: str,
    fingerprint: str,
    payment_method: str,
    now: datetime,
) -> Payment:
    """The payment row; IntegrityError when a unique constraint refuses it: a concurrent
    request with the same key committed first, or another attempt for this booking is still
    under way."""
    return _PAYMENT_INSERT.create(
        booking=booking,
        sale_id=booking.sale_id,
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


# `Payment.objects.create` without compiling its INSERT for every payment (kernel.compiled_inserts).
_PAYMENT_INSERT = CompiledInsert(Payment)


def _lost_the_claim(
    *, customer: AbstractBaseUser, sale_id: int, booking_id: int, key: str, asked: str
) -> PayResponse:
    """After a refused insert: the same key's committed answer (replay or 422), else the other
    attempt under way for this booking (PaymentInProgress, with where to finish it)."""
    existing = _existing(customer, sale_id, key)
    if existing:
        return _replay(existing, asked)
    other = Payment.objects.filter(
        sale_id=sale_id, booking_id=booking_id, status__in=IN_FLIGHT_PAYMENT_STATUSES
    ).first()
    raise PaymentInProgress(
        gettext("Another payment for this booking is under way; finish or abandon it first."),
        paymentId=other.pk if other else None,
        checkoutUrl=(other.checkout_url or None) if other else None,
    )


def purge_idempotency_keys(*, now: datetime | None = None) -> int:
    """Forget keys older than the retention period (at least 24 h; see docs/payments.md)."""
    cutoff = (now or timezone.now()) - settings.PAYMENTS["IDEMPOTENCY_KEY_RETENTION"]
    with transaction.atomic():
        return Payment.objects.filter(
            idempotency_key__isnull=False, created_at__lt=cutoff, response_status__isnull=False
        ).update(idempotency_key=None)
