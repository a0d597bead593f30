"""What calling an event off would do, shown to staff before they confirm: each live booking
and the refund it would get.  The amounts are the ones `events.services.cancel_event` pays: a
called-off event refunds everything paid (payments' refund policy), nothing for a hold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser

from bookings.models import LIVE_STATUSES, Booking, BookingStatus
from events import lifecycle
from events.models import Event
from kernel.errors import DomainError
from payments.selectors import paid_payment


@dataclass(frozen=True)
class BookingRefund:
    booking: Booking
    paid: Decimal
    refund: Decimal


@dataclass(frozen=True)
class CallOffPreview:
    event: Event
    bookings: list[BookingRefund]
    goodwill: bool  # begun: the refunds are goodwill refunds approved by the staff member
    refused: str  # why it may not be called off by this staff member now ("" if it may)

    @property
    def total_refund(self) -> Decimal:
        return sum((row.refund for row in self.bookings), Decimal("0.00"))


def call_off_preview(*, event: Event, by: AbstractBaseUser, now: datetime) -> CallOffPreview:
    try:
        goodwill, refused = lifecycle.check_may_call_off(event, by=by, now=now), ""
    except DomainError as error:
        goodwill, refused = False, error.detail
    rows = []
    if event.sale_id is not None:
        live = (
            Booking.objects.filter(sale_id=event.sale_id, status__in=LIVE_STATUSES)
            .select_related("customer")
            .order_by("id")
        )
        for booking in live:
            payment = (
                paid_payment(booking_id=booking.pk)
                if booking.status == BookingStatus.CONFIRMED
                else None
            )
            paid = payment.amount - payment.refunded_amount if payment else Decimal("0.00")
            rows.append(BookingRefund(booking, paid, paid))
    return CallOffPreview(event, rows, goodwill, refused)
