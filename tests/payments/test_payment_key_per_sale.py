"""payments 0013: a payment's Idempotency-Key is the customer's within one sale, so a Citus
cluster checks it on the sale's node.  Forward and back with live rows (going back, a key a
customer used in two sales is forgotten on the later payment, as retention would forget it),
and what it changes for the pay request: the same key on another sale's booking is a new
payment; on a booking of the same sale it is still a 422 (with its control)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from payments.models import Payment
from tests.bookings.test_sale_migration import latest, migrate
from tests.factories import FlightFactory, UserFactory, named_hold
from tests.payments.helpers import api_client, pay

BEFORE = [("payments", "0012_refund_resale")]


def payment_row(model, booking, key: str, **extra) -> int:
    now = timezone.now()
    return model.objects.create(
        booking_id=booking.pk, customer_id=booking.customer_id, idempotency_key=key,
        request_fingerprint="f", status="SUCCEEDED", amount=Decimal("10.00"), currency="EUR",
        gateway="sandbox", created_at=now, updated_at=now, **extra,
    ).pk  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_the_key_is_unique_per_sale_forward_and_back_with_live_rows():
    customer = UserFactory()
    first, second = (
        named_hold(customer=customer, flight=FlightFactory(), seats=("12A",)) for _ in range(2)
    )
    try:
        old = migrate(BEFORE)
        OldPayment = old.get_model("payments", "Payment")
        kept = payment_row(OldPayment, first, "k-shared", sale_id=first.sale_id)
        with pytest.raises(IntegrityError), transaction.atomic():  # the old rule
            payment_row(OldPayment, second, "k-shared", sale_id=second.sale_id)

        migrate(latest())
        assert Payment.objects.get(pk=kept).idempotency_key == "k-shared"
        later = payment_row(Payment, second, "k-shared", sale_id=second.sale_id)  # another sale
        with pytest.raises(IntegrityError), transaction.atomic():  # the same sale: refused
            payment_row(Payment, first, "k-shared", sale_id=first.sale_id)

        back = migrate(BEFORE)
        rows = back.get_model("payments", "Payment").objects.values_list("pk", "idempotency_key")
        assert dict(rows) == {kept: "k-shared", later: None}
    finally:
        migrate(latest())
    assert Payment.objects.count() == 2


@pytest.mark.django_db(transaction=True)  # the gateway is called outside any transaction
def test_the_same_key_pays_another_sales_booking_and_is_422_within_one_sale(customer):
    flight = FlightFactory()
    one, same_sale = (
        named_hold(customer=customer, flight=flight, seats=(seat,)) for seat in ("12A", "14A")
    )
    other_sale = named_hold(customer=customer, flight=FlightFactory(), seats=("12A",))
    client = api_client(customer)
    assert pay(client, one, key="k-one-key-for-all").status_code == 202
    # Control: the same sale's other booking under the key is a different request (422).
    assert pay(client, same_sale, key="k-one-key-for-all").status_code == 422
    assert pay(client, other_sale, key="k-one-key-for-all").status_code == 202
    assert set(Payment.objects.values_list("sale_id", flat=True)) == {
        one.sale_id,
        other_sale.sale_id,
    }
