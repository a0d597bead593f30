"""Denied boarding, each transaction on one sale (kernel/sharding.py), with the write log's
trigger on every table (tests/payments/write_log.py): the denial commits on the oversold
flight's sale, and its rerouting follows through the outbox (the `flights.reroute`
consumer queues the task after its receipt commits; Celery runs eagerly here) as a booking
on the later flight's sale, then the denial names it on the first sale again.  The control
is the old shape, the rerouting booked inside the denial's own transaction: caught."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from flights.denied_boarding import denial_order, deny_boarding
from flights.eu261 import Remedy
from flights.models import DeniedBoarding
from flights.rebooking import book_onto
from tests.factories import UserFactory
from tests.flights.oversold import oversold_flight
from tests.payments.write_log import mixed_transactions, recording_writes, sales_written_to

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_denial_and_its_rerouting_through_the_outbox_each_write_one_sale():
    flight, later, _tickets = oversold_flight()
    rerouted, refunded = (c.passenger_id for c in denial_order(flight)[:2])
    with recording_writes():
        deny_boarding(
            flight_id=flight.pk,
            staff=UserFactory(is_staff=True),
            expected_passenger_ids=[rerouted, refunded],
            remedies={refunded: Remedy.REFUND},
        )
        bookings_written = sales_written_to("bookings_booking")
        denials_written = sales_written_to("flights_deniedboarding")
        mixed = mixed_transactions()
    assert not mixed, "transactions that would span nodes:\n" + "\n".join(map(str, mixed))
    # Both sales were written (the rerouting did run, through the outbox and its task) ...
    assert bookings_written >= {flight.sale_id, later.sale_id}
    assert denials_written == {flight.sale_id}
    # ... and the denial names its new booking, on the later flight, once.
    denial = DeniedBoarding.objects.get(passenger_id=rerouted)
    assert denial.rebooked_onto.sale_id == later.sale_id
    assert denial.rebooked_onto.status == BookingStatus.CONFIRMED
    assert Booking.objects.filter(sale_id=later.sale_id, rebooked_from__isnull=False).count() == 1
    assert DeniedBoarding.objects.get(passenger_id=refunded).rebooked_onto is None


def test_control_the_rerouting_booked_inside_the_denials_transaction_is_caught():
    """As `take_off` did before: the later flight's booking in the denial's transaction."""
    flight, later, _tickets = oversold_flight()
    chosen = [c.passenger for c in denial_order(flight)[:2]]
    with recording_writes():
        with transaction.atomic():
            deny_boarding(
                flight_id=flight.pk,
                staff=UserFactory(is_staff=True),
                expected_passenger_ids=[p.pk for p in chosen],
                remedies={chosen[1].pk: Remedy.REFUND},
            )
            book_onto(
                candidate=later, passenger=chosen[0], customer=chosen[0].booking.customer,
                now=timezone.now(),
            )  # fmt: skip
        mixed = mixed_transactions()
    # The combined transaction (and the relay's batch of the events it committed together).
    assert mixed and {m.sales for m in mixed} == {frozenset({flight.sale_id, later.sale_id})}
