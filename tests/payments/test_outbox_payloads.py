"""`refund.issued` round-tripped like the engine's types (tests/bookings/test_outbox_payloads.py),
and every outbox type has its one builder in the app that owns it."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bookings import outbox_payloads as booking_payloads
from flights import outbox_payloads as flight_payloads
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


def test_every_outbox_type_has_one_builder_in_one_app():
    engine, payments = set(booking_payloads.BUILDERS), set(payment_payloads.BUILDERS)
    departure = set(flight_payloads.BUILDERS)  # the day of departure's (issue 28)
    assert not engine & payments and not (engine | payments) & departure
    assert engine | payments | departure == set(OutboxEventType)


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
