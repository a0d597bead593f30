"""Stripe's own currency rules (issue 24, item 8): amounts exact in every currency, prices the
gateway cannot charge refused where staff set them, refunds in the currency's unit, captured
money that cannot confirm a booking always paid back, lapsed checkouts reconciled."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from bookings.models import Booking, BookingStatus
from events.errors import InvalidEvent
from events.models import PriceCategory
from events.services import PriceCategorySpec, check_price_categories
from flights.admin import FareInventoryForm
from flights.models import FareClass
from flights.services import CabinLayout, CabinSection
from kernel.errors import InvalidRequest
from payments import reconciliation
from payments.currency import NotChargeable, from_minor_units, to_minor_units
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundReason,
    RefundStatus,
    WebhookEvent,
)
from payments.selectors import quote_for
from tests.bookings.confirming import confirm
from tests.factories import FlightFactory
from tests.payments.helpers import api_client, hold, pay
from tests.payments.test_stripe import stripe_event, stripe_signed, stub  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _flight(currency, price, **kwargs):
    layout = CabinLayout(
        sections=(CabinSection(FareClass.ECONOMY, rows=20, letters="ABCDEF", price=price),),
        currency=currency,
    )
    return FlightFactory(layout=layout, **kwargs)


@pytest.mark.parametrize(
    ("amount", "currency", "sent"),
    [
        ("10.00", "KWD", 10000),  # today 1000: Stripe reads 1.000 KWD
        ("5.12", "BHD", 5120),
        ("89", "JPY", 89),
        ("5", "ISK", 500),  # zero-decimal, sent with two zero decimals
        ("10.45", "HUF", 1045),  # two decimals for charges
        ("10.45", "TWD", 1045),
        ("5000", "UGX", 5000),
        ("10.45", "IDR", 1045),  # ISO/Babel say 0 or 2; Stripe says 2
        ("10.45", "EUR", 1045),
    ],
)
def test_amounts_follow_stripes_rules(amount, currency, sent):
    assert to_minor_units(Decimal(amount), currency) == sent
    assert from_minor_units(sent, currency) == Decimal(amount)


@pytest.mark.parametrize(
    ("amount", "currency"),
    [("89.50", "JPY"), ("5.124", "KWD"), ("5.5", "ISK"), ("10.005", "EUR"), ("1.5", "UGX")],
)
def test_amounts_the_gateway_cannot_charge_are_refused_not_rounded(amount, currency):
    with pytest.raises(NotChargeable):
        to_minor_units(Decimal(amount), currency)


def test_from_minor_units_is_exact():
    # Today: cut to 0.01, so 10.005 KWD read as 10.01 (or 100.05 with the x100 factor).
    assert from_minor_units(10005, "KWD") == Decimal("10.005")


def test_a_kwd_booking_is_charged_at_its_price(stub, customer):  # noqa: F811
    flight = _flight("KWD", Decimal("10.00"))
    booking = hold(customer, flight, seats=("12A",))
    response = pay(api_client(customer), booking, paymentMethod="pm_card_visa")
    assert response.status_code == 201, response.json()
    assert stub.requests[0]["params"]["amount"] == "10000"
    assert Payment.objects.get().status == PaymentStatus.SUCCEEDED


# --- prices staff set --------------------------------------------------------------------------


def test_an_event_category_price_the_gateway_cannot_charge_is_refused_with_a_message():
    spec = PriceCategorySpec(code="A", name="Stalls", price=Decimal("89.50"), currency="JPY")
    with pytest.raises(InvalidEvent, match="JPY in whole units only"):
        check_price_categories([spec])
    category = PriceCategory(code="A", name="Stalls", price=Decimal("89.50"), currency="JPY")
    with pytest.raises(ValidationError) as error:
        category.clean()
    assert "whole units" in str(error.value.message_dict["price"])
    # Control: the same price in euros, and whole yen, are fine.
    check_price_categories([PriceCategorySpec("A", "Stalls", Decimal("89.50"), "EUR")])
    PriceCategory(code="A", name="Stalls", price=Decimal("90"), currency="JPY").clean()


def test_the_flight_fare_form_refuses_an_unchargeable_price(flight):
    inventory = flight.sale.inventories.get(fare_class="ECONOMY")
    data = {"fare_class": "ECONOMY", "capacity": 168, "overbook_limit": 0, "currency": "JPY"}
    form = FareInventoryForm(data={**data, "price": "89.50"}, instance=inventory)
    assert not form.is_valid()
    assert "whole units" in form.errors["price"][0]
    assert FareInventoryForm(data={**data, "price": "90"}, instance=inventory).is_valid()


def test_a_flight_with_an_unchargeable_fare_is_not_created():
    with pytest.raises(InvalidRequest, match="KWD"):
        _flight("KWD", Decimal("10.125"))


# --- refunds -----------------------------------------------------------------------------------


def test_a_partial_refund_is_rounded_to_the_currencys_unit(customer):
    # Departs in 5 days: the default policy gives 50%.  Half of 89 yen is 45 yen, not 44.50.
    flight = _flight("JPY", Decimal("89"), departure_at=timezone.now() + timedelta(days=5))
    booking = confirm(hold(customer, flight, seats=("12A",)))
    booking.sale = flight.sale
    paid = Payment(amount=Decimal("89"), refunded_amount=Decimal("0"), currency="JPY")
    quote = quote_for(booking=booking, payment=paid, now=timezone.now())
    assert (quote.rule, quote.percent) == ("partial", 50)
    assert quote.amount == Decimal("45")


# --- captured money that cannot confirm -------------------------------------------------------


def test_a_capture_of_another_amount_is_refunded_and_confirms_nothing(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    assert pay(api_client(customer), booking).status_code == 202  # hosted checkout, PENDING
    payment = Payment.objects.get()

    # Stripe took 207.99 for a 208.00 booking (a rounded or edited charge).
    body, headers = stripe_signed(stripe_event(payment.pk, amount=20799))
    response = Client().post(
        "/api/payments/webhook", body, content_type="application/json", **headers
    )

    assert response.status_code == 200
    booking.refresh_from_db()
    assert booking.status == BookingStatus.HELD  # not confirmed at the wrong price
    refund = Refund.objects.get()  # today: none, the event was "ignored" and the money kept
    assert (refund.reason, refund.amount, refund.status) == (
        RefundReason.AMOUNT_MISMATCH,
        Decimal("207.99"),
        RefundStatus.SUCCEEDED,
    )
    assert stub.requests[-1]["params"] == {"payment_intent": "pi_123", "amount": "20799"}
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.REFUNDED
    assert "208.00 EUR" in payment.failure_reason


def test_a_lapsed_hosted_checkout_the_customer_paid_is_reconciled_and_refunded(
    stub,  # noqa: F811
    customer,
    flight,
):
    booking = hold(customer, flight)
    assert pay(api_client(customer), booking).status_code == 202
    payment = Payment.objects.get()
    stub.pay_session(payment.gateway_reference)  # paid on Stripe's page; the webhook is lost
    # The hold ran out an hour after the checkout started.
    an_hour_ago = timezone.now() - timedelta(hours=1)
    Booking.objects.filter(pk=booking.pk).update(expires_at=an_hour_ago)
    Payment.objects.filter(pk=payment.pk).update(updated_at=an_hour_ago)

    assert reconciliation.reconcile_stuck_payments() == 1  # today: 0, PENDING is skipped

    payment.refresh_from_db()
    assert payment.status == PaymentStatus.REFUNDED
    assert Refund.objects.get().reason == RefundReason.LATE_PAYMENT


def test_control_a_pending_checkout_with_a_live_hold_is_left_alone(stub, customer, flight):  # noqa: F811
    booking = hold(customer, flight)
    assert pay(api_client(customer), booking).status_code == 202
    soon = timezone.now() + timedelta(seconds=180)  # older than RECONCILE_AFTER, hold still on
    assert reconciliation.reconcile_stuck_payments(now=soon) == 0
    assert Payment.objects.get().status == PaymentStatus.PENDING


# --- the webhook's payment id -------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["abc", "1e5", "٣", "9" * 40, " "])
def test_a_payment_id_that_is_not_a_number_is_a_logged_ignore_not_a_500(
    stub,  # noqa: F811
    bad,
    caplog,
):
    payload = stripe_event(1)
    payload["data"]["object"]["metadata"]["payment_id"] = bad
    payload["data"]["object"]["id"] = "pi_unknown"
    body, headers = stripe_signed(payload)
    response = Client(raise_request_exception=False).post(
        "/api/payments/webhook", body, content_type="application/json", **headers
    )
    assert response.status_code == 200
    assert WebhookEvent.objects.get().outcome == "ignored: unknown payment"
