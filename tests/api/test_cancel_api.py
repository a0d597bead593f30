"""DELETE /api/bookings/{id}: holds released, confirmed bookings refunded by policy, refused
after departure; the answer carries the refund decided."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Flight, Seat, SeatStatus
from flights.services import check_inventory
from payments.models import Payment, PaymentStatus, Refund, RefundStatus
from tests.api.conftest import GOOD_CARD, client_for, pay, problem
from tests.factories import named_hold

pytestmark = pytest.mark.django_db(transaction=True)


def paid(customer, flight, seats=("12A", "12B")):
    booking = named_hold(customer=customer, flight=flight, seats=seats)
    assert pay(client_for(customer), booking.pk, paymentMethod=GOOD_CARD).status_code == 201
    return booking


def depart_in(flight, delta):
    departure = timezone.now() + delta
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=departure, arrival_at=departure + timedelta(hours=2)
    )


def test_cancel_confirmed_booking_answers_with_the_refund(sandbox_payments, customer, flight):
    booking = paid(customer, flight)
    depart_in(flight, timedelta(days=30))
    response = client_for(customer).delete(f"/api/bookings/{booking.pk}")

    assert response.status_code == 200, response.content
    data = response.json()
    refund = Refund.objects.get()
    # The refund task ran eagerly on commit, so the answer already shows it paid back.
    assert data["refund"] == {
        "id": refund.pk,
        "amount": "208.00",
        "currency": "EUR",
        "status": "SUCCEEDED",
        "reason": "CANCELLATION",
    }
    assert refund.status == RefundStatus.SUCCEEDED
    assert (data["policy"]["rule"], data["policy"]["percent"]) == ("full", 100)
    assert data["booking"]["status"] == "CANCELLED" and data["booking"]["closedAt"]
    assert Payment.objects.get().status == PaymentStatus.REFUNDED
    assert Seat.objects.filter(sale=flight.sale, status=SeatStatus.AVAILABLE).count() == 180
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").sold == 0
    assert check_inventory(sale_id=flight.sale_id) == []


def test_partial_refund_a_few_days_before_departure(sandbox_payments, customer, flight):
    booking = paid(customer, flight)
    depart_in(flight, timedelta(days=5))
    data = client_for(customer).delete(f"/api/bookings/{booking.pk}").json()
    assert data["refund"]["amount"] == "104.00" and data["policy"]["percent"] == 50


def test_close_to_departure_cancels_without_refund(sandbox_payments, customer, flight):
    booking = paid(customer, flight)
    depart_in(flight, timedelta(hours=3))
    data = client_for(customer).delete(f"/api/bookings/{booking.pk}").json()
    assert data["refund"] is None and data["policy"]["rule"] == "none"
    assert data["booking"]["status"] == "CANCELLED"
    assert not Refund.objects.exists()


def test_after_departure_is_409_and_nothing_changes(sandbox_payments, customer, flight):
    booking = paid(customer, flight)
    depart_in(flight, -timedelta(minutes=5))
    data = problem(client_for(customer).delete(f"/api/bookings/{booking.pk}"), 409)
    assert data["type"].endswith("/cancellation-refused")
    assert "already departed" in data["detail"]
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").sold == 2
    assert not Refund.objects.exists()


def test_cancelling_twice_refunds_once(sandbox_payments, customer, flight):
    booking = paid(customer, flight)
    client = client_for(customer)
    assert client.delete(f"/api/bookings/{booking.pk}").status_code == 200
    again = problem(client.delete(f"/api/bookings/{booking.pk}"), 409)
    assert again["type"].endswith("/booking-already-cancelled")
    assert Refund.objects.count() == 1


def test_agent_cancels_for_the_customer_and_the_customer_is_refunded(
    sandbox_payments, agent, customer, flight
):
    booking = paid(customer, flight)
    data = client_for(agent).delete(f"/api/bookings/{booking.pk}").json()
    assert data["booking"]["customerId"] == customer.pk
    assert data["refund"]["amount"] == "208.00"
    assert Refund.objects.get().payment.booking_id == booking.pk


def test_someone_else_cannot_cancel_a_confirmed_booking(
    sandbox_payments, customer, other_customer, flight
):
    booking = paid(customer, flight)
    problem(client_for(other_customer).delete(f"/api/bookings/{booking.pk}"), 404)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()
