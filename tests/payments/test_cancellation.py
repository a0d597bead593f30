"""Cancellation: holds released at once; confirmed bookings refunded by the staff-edited policy."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from bookings.errors import BookingNotFound
from bookings.models import Booking, BookingStatus
from flights.models import FareInventory, Flight, FlightStatus, Seat, SeatStatus
from flights.services import check_inventory
from kernel.models import OutboxEvent
from payments.cancellation import cancel_booking
from payments.errors import BookingAlreadyCancelled, CancellationRefused
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundPolicy,
    RefundStatus,
    SandboxRefund,
)
from payments.selectors import quote_refund
from tests.concurrency import run_concurrently
from tests.factories import FlightFactory
from tests.payments.helpers import GOOD_CARD, api_client, hold, pay

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def economy_policy(db):
    # Transactional tests flush the rows the data migration seeded, so state the policy here.
    policy, _ = RefundPolicy.objects.update_or_create(
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
    return policy


def confirmed(customer, departs_in=timedelta(days=30), seats=("12A", "12B")):
    flight = FlightFactory(departure_at=timezone.now() + departs_in)
    booking = hold(customer, flight, seats)
    assert pay(api_client(customer), booking, paymentMethod=GOOD_CARD).status_code == 201
    booking.refresh_from_db()
    return flight, booking


@pytest.mark.parametrize(
    ("before_departure", "rule", "percent", "amount"),
    [
        (timedelta(days=20), "full", 100, "208.00"),
        (timedelta(days=14), "full", 100, "208.00"),  # exactly on the boundary: still full
        (timedelta(days=14) - timedelta(seconds=1), "partial", 50, "104.00"),
        (timedelta(hours=24), "partial", 50, "104.00"),
        (timedelta(hours=24) - timedelta(seconds=1), "none", 0, "0.00"),
        (timedelta(seconds=1), "none", 0, "0.00"),
        (timedelta(0), "refused", 0, "0.00"),
        (-timedelta(hours=1), "refused", 0, "0.00"),
    ],
)
def test_refund_quote_across_the_economy_policy_boundaries(
    customer, before_departure, rule, percent, amount
):
    flight, booking = confirmed(customer)
    policy = RefundPolicy.objects.get(fare_class="ECONOMY")
    assert (
        policy.full_refund_days,
        policy.partial_refund_percent,
        policy.partial_refund_hours,
    ) == (14, 50, 24)

    quote = quote_refund(
        customer=customer, booking_id=booking.pk, now=flight.departure_at - before_departure
    )

    assert (quote.rule, quote.percent, quote.amount) == (rule, percent, Decimal(amount))
    assert quote.cancellable is (rule != "refused")
    assert quote.paid == Decimal("208.00") and quote.reason


def test_odd_percentages_round_to_the_cent(customer):
    RefundPolicy.objects.filter(fare_class="ECONOMY").update(partial_refund_percent=33)
    flight, booking = confirmed(customer)
    quote = quote_refund(
        customer=customer, booking_id=booking.pk, now=flight.departure_at - timedelta(days=2)
    )
    assert quote.amount == Decimal("68.64")  # 208.00 * 33% = 68.64


def test_cancel_confirmed_booking_full_refund(customer):
    flight, booking = confirmed(customer)
    quote = quote_refund(customer=customer, booking_id=booking.pk)

    result = cancel_booking(customer=customer, booking_id=booking.pk)

    assert result.quote.amount == quote.amount == Decimal("208.00")
    booking.refresh_from_db()
    assert booking.status == BookingStatus.CANCELLED and booking.closed_at is not None
    assert (
        Seat.objects.filter(
            sale=flight.sale, seat_no__in=["12A", "12B"], status=SeatStatus.AVAILABLE
        ).count()
        == 2
    )
    inventory = FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY")
    assert (inventory.sold, inventory.held) == (0, 0)
    refund = Refund.objects.get()
    assert (refund.status, refund.amount, refund.reason) == (
        RefundStatus.SUCCEEDED,
        Decimal("208.00"),
        "CANCELLATION",
    )
    assert SandboxRefund.objects.get().amount == Decimal("208.00")
    assert Payment.objects.get().status == PaymentStatus.REFUNDED
    events = list(
        OutboxEvent.objects.filter(aggregate_id=str(booking.pk)).values_list(
            "event_type", flat=True
        )
    )
    assert events == ["booking.confirmed", "booking.cancelled", "seats.released", "refund.issued"]
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancel_with_partial_refund(customer):
    flight, booking = confirmed(customer, departs_in=timedelta(days=5))
    result = cancel_booking(customer=customer, booking_id=booking.pk)
    assert (
        result.refund.amount == Decimal("104.00") and result.refund.status == RefundStatus.SUCCEEDED
    )
    payment = Payment.objects.get()
    assert (payment.status, payment.refunded_amount) == (PaymentStatus.SUCCEEDED, Decimal("104.00"))
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancel_close_to_departure_refunds_nothing(customer):
    flight, booking = confirmed(customer, departs_in=timedelta(hours=3))
    result = cancel_booking(customer=customer, booking_id=booking.pk)
    assert result.refund is None and result.quote.rule == "none"
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    assert not Refund.objects.exists()
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancelling_twice_is_refused_and_refunds_once(customer):
    _, booking = confirmed(customer)
    cancel_booking(customer=customer, booking_id=booking.pk)
    with pytest.raises(BookingAlreadyCancelled) as exc:
        cancel_booking(customer=customer, booking_id=booking.pk)
    assert exc.value.status == 409
    assert Refund.objects.count() == 1 and SandboxRefund.objects.count() == 1


@pytest.mark.concurrency
def test_two_concurrent_cancellations_refund_once(customer):
    flight, booking = confirmed(customer)
    outcomes = run_concurrently(
        [lambda: cancel_booking(customer=customer, booking_id=booking.pk)] * 2
    )
    assert len(outcomes.results) == 1 and outcomes.error_kinds == {"BookingAlreadyCancelled": 1}
    assert Refund.objects.count() == 1
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancel_after_departure_is_refused_and_nothing_changes(customer):
    flight, booking = confirmed(customer)
    Flight.objects.filter(pk=flight.pk).update(
        departure_at=timezone.now() - timedelta(minutes=5),
        arrival_at=timezone.now() + timedelta(hours=2),
    )
    with pytest.raises(CancellationRefused) as exc:
        cancel_booking(customer=customer, booking_id=booking.pk)
    assert "already departed" in exc.value.detail
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert not Refund.objects.exists()
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").sold == 2


def test_airline_cancelled_flight_refunds_in_full_even_late(customer):
    flight, booking = confirmed(customer, departs_in=timedelta(hours=2))
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.CANCELLED)
    result = cancel_booking(customer=customer, booking_id=booking.pk)
    assert result.refund.amount == Decimal("208.00")


def test_cancel_hold_releases_seats_at_once(customer, flight):
    booking = hold(customer, flight)
    result = cancel_booking(customer=customer, booking_id=booking.pk)
    assert result.quote.rule == "hold" and result.refund is None
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    assert not Seat.objects.filter(sale=flight.sale, status=SeatStatus.HELD).exists()
    assert FareInventory.objects.get(sale=flight.sale, fare_class="ECONOMY").held == 0
    assert check_inventory(sale_id=flight.sale_id) == []


def test_only_owner_or_staff_can_cancel(customer, other_customer, staff_user):
    _, booking = confirmed(customer)
    with pytest.raises(BookingNotFound):
        cancel_booking(customer=other_customer, booking_id=booking.pk)
    with pytest.raises(BookingNotFound):
        quote_refund(customer=other_customer, booking_id=booking.pk)
    result = cancel_booking(customer=staff_user, booking_id=booking.pk, by_staff=True)
    assert result.booking.status == BookingStatus.CANCELLED


def test_staff_edit_refund_policy_in_admin_changes_the_quote(customer, staff_user):
    _, booking = confirmed(customer, departs_in=timedelta(days=5))
    assert quote_refund(customer=customer, booking_id=booking.pk).percent == 50
    policy = RefundPolicy.objects.get(fare_class="ECONOMY")
    admin = Client()
    admin.force_login(staff_user)
    url = f"/admin/payments/refundpolicy/{policy.pk}/change/"
    assert admin.get(url).status_code == 200
    response = admin.post(
        url,
        {
            "kind": "FLIGHT",
            "fare_class": "ECONOMY",
            "full_refund_days": 3,
            "partial_refund_percent": 50,
            "partial_refund_hours": 24,
            "resale_fee_percent": "0",
        },
    )
    assert response.status_code == 302
    assert quote_refund(customer=customer, booking_id=booking.pk).percent == 100
    bad = admin.post(
        url,
        {
            "kind": "FLIGHT",
            "fare_class": "ECONOMY",
            "full_refund_days": 3,
            "partial_refund_percent": 150,
            "partial_refund_hours": 24,
            "resale_fee_percent": "0",
        },
    )
    assert bad.status_code == 200  # form re-shown with the constraint error
    assert RefundPolicy.objects.get(pk=policy.pk).partial_refund_percent == 50


def test_admin_pages_for_payments_render(customer, staff_user):
    confirmed(customer)
    admin = Client()
    admin.force_login(staff_user)
    for url in [
        "/admin/payments/payment/",
        "/admin/payments/refund/",
        "/admin/payments/webhookevent/",
        f"/admin/payments/payment/{Payment.objects.get().pk}/change/",
    ]:
        assert admin.get(url).status_code == 200, url


def test_lost_refund_tasks_are_requeued_once_stale(customer, monkeypatch):
    from payments import refunds

    _, booking = confirmed(customer)
    # The broker loses the refund task: nothing is queued after the cancellation commits.
    monkeypatch.setattr(refunds, "queue_refund", lambda *, refund_id: None)
    cancel_booking(customer=customer, booking_id=booking.pk)
    refund = Refund.objects.get()
    assert refund.status == RefundStatus.PENDING
    monkeypatch.undo()

    assert refunds.requeue_stale_refunds() == 0  # still within the grace period
    later = timezone.now() + timedelta(minutes=11)
    assert refunds.requeue_stale_refunds(now=later) == 1
    refund.refresh_from_db()
    assert refund.status == RefundStatus.SUCCEEDED
    assert refunds.requeue_stale_refunds(now=later) == 0
    assert SandboxRefund.objects.count() == 1
