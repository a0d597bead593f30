"""`refund.issued` round-tripped like the engine's types (tests/bookings/test_outbox_payloads.py),
and every outbox type has its one builder in the app that owns it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bookings import outbox_payloads as booking_payloads
from kernel.models import OutboxEvent
from kernel.outbox_types import OutboxEventType
from payments import outbox_payloads as payment_payloads
from payments.cancellation import cancel_booking
from payments.models import Refund, RefundPolicy
from tests.bookings.confirming import round_trip
from tests.factories import FlightFactory
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def economy_policy(db):
    # Transactional tests flush the rows the data migration seeded, so state the policy here.
    RefundPolicy.objects.update_or_create(
        kind="FLIGHT",
        sale=None,
        fare_class="ECONOMY",
        defaults={
            "full_refund_days": 14,
            "partial_refund_percent": 50,
            "partial_refund_hours": 24,
            "updated_at": timezone.now(),
        },
    )


# The day of departure's events (issue 28) are built in flights, one place per type
# (flights/denied_boarding.py `_emit`, flights/compensation.py, flights/boarding_priority.py),
# not yet through a builder table like the engine's and payments'.
BUILT_IN_FLIGHTS = {
    OutboxEventType.VOLUNTEERS_ASKED,
    OutboxEventType.VOLUNTEER_ANSWERED,
    OutboxEventType.BOARDING_DENIED,
    OutboxEventType.COMPENSATION_PAID,
    OutboxEventType.BOARDING_PRIORITY_SET,
}


def test_every_outbox_type_has_one_builder_in_one_app():
    engine, payments = set(booking_payloads.BUILDERS), set(payment_payloads.BUILDERS)
    assert not engine & payments
    assert not (engine | payments) & BUILT_IN_FLIGHTS
    assert engine | payments | BUILT_IN_FLIGHTS == set(OutboxEventType)


def test_refund_issued(customer):
    flight = FlightFactory()
    booking = hold(customer, flight)
    assert pay(api_client(customer), booking, paymentMethod=GOOD_CARD).status_code == 201
    cancel_booking(customer=customer, booking_id=booking.pk)
    refund = Refund.objects.get()
    built = payment_payloads.refund_issued(refund, booking_id=booking.pk, sale_id=flight.sale_id)
    row = OutboxEvent.objects.get(event_type=OutboxEventType.REFUND_ISSUED)
    assert row.payload == built
    assert set(built) >= {"bookingId", "saleId", "refundId", "paymentId", "amount", "currency"}
    assert round_trip(OutboxEventType.REFUND_ISSUED, built) == built
