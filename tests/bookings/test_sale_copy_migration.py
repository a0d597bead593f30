"""bookings 0019 and payments 0010 forward and back with live rows: passengers, payments and
refunds get their booking's sale (each its own booking's, across two sales), and going back
drops only the copied column."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from bookings.models import Passenger
from payments.models import Payment, Refund
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory, named_hold

BEFORE = [("bookings", "0017_denied_boarding"), ("payments", "0009_refund_policies_per_catalogue")]


def pay_and_refund(models, booking_id: int, sale_id: int | None, customer_id: int, key: str):
    """A payment with one refund, as the code on either side of the migration writes them."""
    now = timezone.now()
    sale = {} if sale_id is None else {"sale_id": sale_id}
    payment = models["Payment"].objects.create(
        booking_id=booking_id, customer_id=customer_id, idempotency_key=key,
        request_fingerprint="f", status="SUCCEEDED", amount=Decimal("10.00"), currency="EUR",
        gateway="sandbox", created_at=now, updated_at=now, **sale,
    )  # fmt: skip
    models["Refund"].objects.create(
        payment_id=payment.pk, amount=Decimal("1.00"), currency="EUR", reason="CANCELLATION",
        created_at=now, **sale,
    )  # fmt: skip
    return payment.pk


@pytest.mark.django_db(transaction=True)
def test_passengers_payments_and_refunds_get_their_bookings_sale_forward_and_back():
    customer = UserFactory()
    new_flight, old_flight = FlightFactory(), FlightFactory()
    assert new_flight.sale_id != old_flight.sale_id
    new = named_hold(customer=customer, flight=new_flight)
    pay_and_refund(
        {"Payment": Payment, "Refund": Refund}, new.pk, new.sale_id, customer.pk, "k-new"
    )
    try:
        old = migrate(BEFORE)
        OldPassenger = old.get_model("bookings", "Passenger")
        assert "sale" not in {f.name for f in OldPassenger._meta.get_fields()}
        old_models = {m: old.get_model("payments", m) for m in ("Payment", "Refund")}
        assert old_models["Payment"].objects.get(booking_id=new.pk).idempotency_key == "k-new"
        # Rows written by the old code, on another sale.
        old_booking = named_hold_on_old_schema(old, old_flight, customer.pk)
        pay_and_refund(old_models, old_booking, None, customer.pk, "k-old")

        migrate(latest())
        for booking_id, sale_id in (
            (new.pk, new_flight.sale_id),
            (old_booking, old_flight.sale_id),
        ):
            assert set(
                Passenger.objects.filter(booking_id=booking_id).values_list("sale_id", flat=True)
            ) == {sale_id}
            assert Payment.objects.get(booking_id=booking_id).sale_id == sale_id
            assert Refund.objects.get(payment__booking_id=booking_id).sale_id == sale_id
        counts = (Passenger.objects.count(), Payment.objects.count(), Refund.objects.count())

        back = migrate(BEFORE)  # every row stays; only the copy goes
        assert (
            back.get_model("bookings", "Passenger").objects.count(),
            back.get_model("payments", "Payment").objects.count(),
            back.get_model("payments", "Refund").objects.count(),
        ) == counts
    finally:
        migrate(latest())
    # The schema is whole again: today's hold writes the copy itself.
    again = named_hold(customer=UserFactory(), flight=old_flight, seats=("14A",))
    assert set(again.passengers.values_list("sale_id", flat=True)) == {old_flight.sale_id}


def named_hold_on_old_schema(apps, flight, customer_id: int) -> int:
    """A HELD booking with two passengers (one seated, one seatless) as the code before wrote it."""
    now = timezone.now()
    Booking = apps.get_model("bookings", "Booking")
    Passenger = apps.get_model("bookings", "Passenger")
    Seat = apps.get_model("bookings", "Seat")
    booking = Booking.objects.create(
        customer_id=customer_id, sale_id=flight.sale_id, fare_class="ECONOMY", status="HELD",
        seat_count=1, amount=Decimal("100.00"), currency="EUR",
        expires_at=now + timezone.timedelta(minutes=10), created_at=now, updated_at=now,
    )  # fmt: skip
    seat = Seat.objects.get(sale_id=flight.sale_id, seat_no="12A")
    Passenger.objects.create(booking=booking, seat=seat, full_name="Ana Lima", is_live=False)
    Passenger.objects.create(booking=booking, full_name="Bo Chen", is_live=False)
    return booking.pk
