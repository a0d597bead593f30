"""Issue 11, item 5: a hold is paid and confirmed only while its flight is bookable.  When the
flight departs or is cancelled first, nothing is charged; when it happens while the customer
is at the hosted checkout, the money that arrives is refunded in full, like a late payment."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Flight, FlightStatus, Seat, SeatStatus
from flights.rules import bookable_q, is_bookable
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments.gateways.sandbox import complete_checkout
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundReason,
    RefundStatus,
    SandboxCharge,
)
from tests.payments.helpers import (
    GOOD_CARD,
    api_client,
    hold,
    pay,
    post_webhook,
    sandbox_event,
    signed,
)

pytestmark = pytest.mark.django_db(transaction=True)


def departs_a_minute_ago(flight):
    now = timezone.now()
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=now - timedelta(minutes=1), arrival_at=now + timedelta(hours=1)
    )


def cancelled(flight):
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.CANCELLED)


def marked_departed(flight):
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.DEPARTED)


CLOSERS = [departs_a_minute_ago, cancelled, marked_departed]


def assert_released(booking, flight):
    booking.refresh_from_db()
    assert booking.status != BookingStatus.CONFIRMED
    assert not Seat.objects.filter(
        sale=flight.sale, status__in=[SeatStatus.HELD, SeatStatus.SOLD]
    ).exists()
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    assert inventory.sold == 0
    assert not OutboxEvent.objects.filter(event_type="booking.confirmed").exists()
    assert check_inventory(sale_id=flight.sale_id) == []


@pytest.mark.parametrize("close", CLOSERS, ids=lambda f: f.__name__)
def test_paying_a_hold_on_a_closed_flight_charges_nothing(customer, flight, close):
    booking = hold(customer, flight)
    close(flight)
    response = pay(api_client(customer), booking, key="late", paymentMethod=GOOD_CARD)
    assert response.status_code == 409, response.content
    assert response.json()["type"].endswith("/flight-not-bookable")
    assert not Payment.objects.exists() and not SandboxCharge.objects.exists()
    booking.refresh_from_db()
    assert booking.status == BookingStatus.HELD  # released by the normal expiry, unpaid


@pytest.mark.parametrize("close", CLOSERS, ids=lambda f: f.__name__)
def test_money_arriving_after_the_flight_closed_is_refunded_in_full(customer, flight, close):
    booking = hold(customer, flight)
    started = pay(api_client(customer), booking, key="checkout")
    assert started.status_code == 202
    payment = Payment.objects.get()
    close(flight)  # while the customer is on the hosted checkout page
    complete_checkout(charge_id=payment.gateway_reference, card_number=GOOD_CARD, approve=True)
    response = post_webhook(Client(), *signed(sandbox_event(payment)))
    assert response.status_code == 200
    assert_released(booking, flight)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.EXPIRED
    refund = Refund.objects.get()
    assert (refund.status, refund.reason, refund.amount) == (
        RefundStatus.SUCCEEDED,
        RefundReason.FLIGHT_CLOSED,
        payment.amount,
    )
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert SandboxCharge.objects.get().refunded_amount == payment.amount
    # The key's stored answer tells the customer what happened.
    replay = pay(api_client(customer), booking, key="checkout")
    assert replay.status_code == 202  # the answer stored when the checkout started


def test_a_card_payment_racing_the_departure_is_refunded(customer, flight, monkeypatch):
    """The flight closes between recording the payment and the gateway's answer."""
    from payments.gateways.sandbox import SandboxGateway

    booking = hold(customer, flight)
    original = SandboxGateway.create_payment

    def charge_then_close(self, **kwargs):
        result = original(self, **kwargs)
        cancelled(flight)
        return result

    monkeypatch.setattr(SandboxGateway, "create_payment", charge_then_close)
    response = pay(api_client(customer), booking, key="race", paymentMethod=GOOD_CARD)
    assert response.status_code == 409
    assert response.json()["type"].endswith("/flight-not-bookable-refunded")
    assert_released(booking, flight)
    assert Refund.objects.get().reason == RefundReason.FLIGHT_CLOSED
    assert Payment.objects.get().status == PaymentStatus.REFUNDED


def test_control_a_bookable_flight_is_paid_and_confirmed(customer, flight):
    booking = hold(customer, flight)
    response = pay(api_client(customer), booking, key="ok", paymentMethod=GOOD_CARD)
    assert response.status_code == 201
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_one_rule_in_both_forms(flight):
    now = timezone.now()
    cases = {
        "scheduled": (FlightStatus.SCHEDULED, now + timedelta(hours=2), True),
        "left": (FlightStatus.SCHEDULED, now - timedelta(minutes=1), False),
        "cancelled": (FlightStatus.CANCELLED, now + timedelta(hours=2), False),
        "departed": (FlightStatus.DEPARTED, now + timedelta(hours=2), False),
    }
    for name, (status, departure, expected) in cases.items():
        Flight.objects.filter(pk=flight.pk).update(
            status=status, departure_at=departure, arrival_at=departure + timedelta(hours=2)
        )
        flight.refresh_from_db()
        assert is_bookable(flight, now=now) is expected, name
        assert Flight.objects.filter(bookable_q(now=now), pk=flight.pk).exists() is expected, name


def test_holding_on_a_closed_flight_is_refused_by_the_same_rule(customer, flight):
    cancelled(flight)
    from bookings.errors import SaleClosed

    with pytest.raises(SaleClosed):
        hold_seats(
            customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
        )
