"""Issue 15: names before payment on every path.  Starting a payment for a booking with a
nameless passenger is refused (422 `passenger-names-missing`, listing who) on the API and the
page, for seat holds, seatless (overbooking) units and waitlist offers, through every gateway,
and nothing is written or charged.  Money that arrives anyway for a nameless hold (a payment
started before the rule) sells nothing and is refunded; every ticket issued carries a name."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seatless, hold_seats
from bookings.lifecycle import cancel_hold
from bookings.models import Booking, BookingStatus, Ticket
from bookings.waitlist import join_waitlist
from kernel.outbox import relay_outbox
from payments.models import (
    Payment,
    PaymentStatus,
    Refund,
    RefundReason,
    RefundStatus,
    SandboxCharge,
)
from payments.outcomes import confirm_payment
from tests.bookings.test_waitlist import sold_out_flight
from tests.factories import FlightFactory, economy_only_layout, name_everyone
from tests.payments.helpers import GOOD_CARD, api_client, pay
from tests.payments.test_stripe import SECRET as STRIPE_SECRET
from tests.payments.test_stripe import StubStripeHTTP

pytestmark = pytest.mark.django_db(transaction=True)  # gateways are called outside transactions


def unnamed_hold(customer, flight, seats=("14B", "14A")):
    return hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=list(seats)
    )


def assert_refused(response, *, seats):
    """A 422 problem naming each passenger without a name (by seat; None = seatless)."""
    assert response.status_code == 422, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["type"].endswith("/passenger-names-missing")
    assert body["title"] == "Passenger names missing"
    assert [p["seat"] for p in body["unnamedPassengers"]] == seats
    return body


def assert_nothing_happened(booking):
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    assert not Payment.objects.filter(booking=booking).exists()
    assert not SandboxCharge.objects.exists()


def issue_all_tickets():
    relay_outbox(now=timezone.now() + timedelta(hours=1))


def assert_every_ticket_named(booking, names):
    issue_all_tickets()
    tickets = list(Ticket.objects.filter(booking=booking).order_by("id"))
    assert len(tickets) == booking.seat_count
    assert sorted(t.passenger_name for t in tickets) == sorted(names)
    assert not Ticket.objects.filter(passenger_name="").exists()


def test_api_refuses_a_seat_hold_without_names_then_pays_it_once_named(customer, flight):
    booking = unnamed_hold(customer, flight)
    api = api_client(customer)

    body = assert_refused(
        pay(api, booking, key="k-1", paymentMethod=GOOD_CARD), seats=["14A", "14B"]
    )
    assert "passenger 1 (seat 14A), passenger 2 (seat 14B)" in body["detail"]
    assert_nothing_happened(booking)

    # Half named: only the one still missing is listed.
    booking.passengers.filter(seat__seat_no="14A").update(full_name="Ana Lima")
    assert_refused(pay(api, booking, key="k-1", paymentMethod=GOOD_CARD), seats=["14B"])
    assert_nothing_happened(booking)

    named = api.put(
        f"/api/bookings/{booking.pk}/passengers",
        {"passengerNames": ["Ana Lima", "Bo Chen"]},
        format="json",
    )
    assert named.status_code == 200, named.content
    # The refused request claimed nothing: the same Idempotency-Key now pays.
    paid = pay(api, booking, key="k-1", paymentMethod=GOOD_CARD)
    assert paid.status_code == 201, paid.content
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert_every_ticket_named(booking, ["Ana Lima", "Bo Chen"])


def test_api_refuses_a_seatless_overbooking_unit_without_a_name(customer):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=2))
    booking = hold_seatless(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=2
    )
    api = api_client(customer)

    body = assert_refused(pay(api, booking, paymentMethod=GOOD_CARD), seats=[None, None])
    assert "(no seat yet)" in body["detail"]
    assert_nothing_happened(booking)

    name_everyone(booking)
    assert pay(api, booking, key="k-2", paymentMethod=GOOD_CARD).status_code == 201
    assert_every_ticket_named(booking, ["Passenger 1", "Passenger 2"])


def test_a_waitlist_offer_arrives_unnamed_and_is_paid_only_once_named(customer):
    full, holders = sold_out_flight()
    join_waitlist(customer=customer, sale_id=full.sale_id, fare_class="ECONOMY", party_size=1)
    cancel_hold(customer=holders[0].customer, booking_id=holders[0].pk)
    offer = Booking.objects.get(customer=customer, status=BookingStatus.HELD)
    api = api_client(customer)

    assert_refused(
        pay(api, offer, paymentMethod=GOOD_CARD), seats=[holders[0].passengers.get().seat.seat_no]
    )
    assert_nothing_happened(offer)

    api.put(
        f"/api/bookings/{offer.pk}/passengers", {"passengerNames": ["Wei Zhang"]}, format="json"
    )
    assert pay(api, offer, key="k-2", paymentMethod=GOOD_CARD).status_code == 201
    assert_every_ticket_named(offer, ["Wei Zhang"])


def test_the_page_checkout_refuses_with_a_message_and_charges_nothing(client, customer, flight):
    booking = unnamed_hold(customer, flight)
    client.force_login(customer)

    # A forged Pay (the page only shows the button once names are in).
    response = client.post(
        reverse("payments:checkout", args=[booking.pk]), {"idempotency_key": "a" * 32}, follow=True
    )

    shown = [str(m) for m in response.context["messages"]]
    assert any(m.startswith("Passenger names missing.") and "seat 14A" in m for m in shown)
    assert response.redirect_chain[-1][0] == reverse("bookings:detail", args=[booking.pk])
    assert b'id="names-form"' in response.content
    assert_nothing_happened(booking)


def test_the_stripe_gateway_is_never_asked_to_charge_a_nameless_booking(customer, flight, settings):
    http = StubStripeHTTP()
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "stripe"}
    settings.STRIPE = {
        **settings.STRIPE,
        "API_KEY": "sk_test_stub",
        "WEBHOOK_SECRET": STRIPE_SECRET,
        "HTTP_CLIENT": http,
        "MAX_NETWORK_RETRIES": 0,
    }
    booking = unnamed_hold(customer, flight)

    assert_refused(
        pay(api_client(customer), booking, paymentMethod="pm_card_visa"), seats=["14A", "14B"]
    )
    assert http.requests == []
    assert_nothing_happened(booking)


def test_money_for_a_nameless_hold_sells_nothing_and_is_refunded(client, customer, flight):
    """A payment started before names were required (made here directly) is paid by webhook:
    no nameless ticket; the money goes back in full and the hold stays for a named payment."""
    booking = unnamed_hold(customer, flight)
    now = timezone.now()
    payment = Payment.objects.create(
        booking=booking,
        sale_id=booking.sale_id,
        customer=customer,
        idempotency_key="before-the-rule",
        request_fingerprint="x",
        amount=booking.amount,
        currency=booking.currency,
        gateway="sandbox",
        status=PaymentStatus.PENDING,
        created_at=now,
        updated_at=now,
    )

    confirm_payment(payment_id=payment.pk, reference="ch_before")
    confirm_payment(payment_id=payment.pk, reference="ch_before")  # a redelivered webhook

    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    assert Payment.objects.get(pk=payment.pk).status in (
        PaymentStatus.REFUND_REQUIRED,
        PaymentStatus.REFUNDED,
    )
    refund = Refund.objects.get(payment=payment)
    assert (refund.amount, refund.reason) == (booking.amount, RefundReason.NAMES_MISSING)
    assert refund.status in (RefundStatus.PENDING, RefundStatus.SUCCEEDED, RefundStatus.FAILED)
    issue_all_tickets()
    assert not Ticket.objects.filter(booking=booking).exists()
    client.force_login(customer)
    page = client.get(reverse("bookings:detail", args=[booking.pk])).content.decode()
    assert 'id="unnamed-payment-refunded"' in page and 'id="names-form"' in page
    assert 'id="late-payment"' not in page

    # Named, the same hold is paid by a new payment and ticketed with the names.
    name_everyone(booking)
    assert pay(api_client(customer), booking, key="k-3", paymentMethod=GOOD_CARD).status_code == 201
    assert_every_ticket_named(booking, ["Passenger 1", "Passenger 2"])
