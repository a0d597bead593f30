"""A sold-out event category with a paid booking to resell and parties on its waitlist,
through the real services (hold, sandbox payment, waitlist)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.utils import timezone

from bookings import tickets
from bookings.customer_holds import hold_seats
from bookings.models import Booking
from bookings.waitlist import join_waitlist
from events.models import Event
from payments.models import Payment, PaymentStatus, RefundPolicy
from tests.api.conftest import GOOD_CARD, client_for, pay
from tests.events.factories import EventFactory
from tests.factories import UserFactory

# Category A of the small hall: stalls rows 1-2, seats 1-6, 80.00 each.
CATEGORY_A = [f"1-{row}-{number}" for row in (1, 2) for number in range(1, 7)]
SELLER_SEATS = ["1-1-1", "1-1-2"]


@dataclass
class Resellable:
    event: Event
    seller: object
    booking: Booking


def sold_out_event_with_paid_booking(*, fee_percent: str = "10") -> Resellable:
    event = EventFactory()
    RefundPolicy.objects.update_or_create(
        kind="EVENT",
        sale=event.sale,
        fare_class="",
        defaults={"resale_fee_percent": Decimal(fee_percent), "updated_at": timezone.now()},
    )
    seller = UserFactory()
    booking = hold_seats(
        customer=seller,
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=SELLER_SEATS,
        passenger_names=["Ada Lovelace", "Alan Turing"],
    )
    response = pay(
        client_for(seller), booking.pk, amount="160.00", currency="EUR", paymentMethod=GOOD_CARD
    )
    assert response.status_code == 201, response.content
    tickets.issue_tickets(booking_id=booking.pk)
    rest = [s for s in CATEGORY_A if s not in SELLER_SEATS]
    for i in range(0, len(rest), 2):  # everyone else's: category A is sold out
        hold_seats(
            customer=UserFactory(),
            sale_id=event.sale_id,
            fare_class="A",
            seat_numbers=rest[i : i + 2],
        )
    booking.refresh_from_db()
    return Resellable(event=event, seller=seller, booking=booking)


def wait(event: Event, *, party_size: int = 2, **wishes):
    customer = UserFactory()
    entry = join_waitlist(
        customer=customer,
        sale_id=event.sale_id,
        fare_class="A",
        party_size=party_size,
        **wishes,
    )
    return customer, entry


def payment_in_flight(offer: Booking) -> Payment:
    """A payment the gateway has taken but whose success is not applied yet (the webhook is
    on its way): what `confirm_payment` then applies."""
    now = timezone.now()
    return Payment.objects.create(
        sale_id=offer.sale_id,
        booking=offer,
        customer=offer.customer,
        request_fingerprint="resale-test",
        status=PaymentStatus.PROCESSING,
        amount=offer.amount,
        currency=offer.currency,
        gateway="sandbox",
        gateway_reference=f"ch_resale_{offer.pk}",
        created_at=now,
        updated_at=now,
    )


def name(offer: Booking) -> None:
    from bookings.passengers import name_passengers

    name_passengers(
        customer=offer.customer,
        booking_id=offer.pk,
        names=[f"Buyer {i}" for i in range(offer.seat_count)],
    )
