"""Paying and cancelling from the pages (Django test client): the hold page's Pay button,
the "payment pending" page that waits for the webhook, the confirmation with QR codes, and
cancellation with the refund shown first.  Bad input gives a message and changes nothing;
other people's bookings are 404."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus, Ticket
from bookings.tickets import issue_tickets
from flights.models import Flight, FlightStatus, Seat, SeatStatus
from flights.services import check_inventory
from payments.gateways import sandbox
from payments.models import Payment, PaymentStatus, Refund, SandboxCharge
from payments.outcomes import confirm_payment, fail_payment

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_webhook_delivery(settings):
    # The sandbox's webhook goes over HTTP from a worker; these tests apply outcomes directly.
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {**settings.PAYMENTS_SANDBOX, "DELIVER_WEBHOOKS": False}


def hold(customer, flight, seats=("12A", "12B")):
    return hold_seats(
        customer=customer,
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=list(seats),
        passenger_names=["Ana Lima", "Bo Chen"][: len(seats)],
    )


def detail_url(booking):
    return reverse("bookings:detail", args=[booking.pk])


def pay_key(page) -> str:
    return (
        re.search(rb'name="idempotency_key" value="([0-9a-f]{32})"', page.content).group(1).decode()
    )


def pay(client, booking, key):
    return client.post(reverse("payments:checkout", args=[booking.pk]), {"idempotency_key": key})


def messages_of(response):
    return [str(m) for m in response.context["messages"]]


def progress(client, booking):
    return client.get(reverse("bookings:progress", args=[booking.pk])).json()["state"]


def confirmed_with_tickets(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(detail_url(booking))))
    confirm_payment(payment_id=Payment.objects.get(booking=booking).pk, reference="ch_x")
    issue_tickets(booking_id=booking.pk)
    return booking


# --- paying ----------------------------------------------------------------------------------


def test_each_drawing_of_the_hold_page_carries_a_fresh_payment_key(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    first, second = client.get(detail_url(booking)), client.get(detail_url(booking))
    assert b"TODO" not in first.content and b"not connected" not in first.content
    assert pay_key(first) != pay_key(second)


def test_pay_goes_to_the_hosted_checkout_and_a_double_submit_is_one_payment(
    client, customer, flight
):
    booking = hold(customer, flight)
    client.force_login(customer)
    key = pay_key(client.get(detail_url(booking)))

    first, again = pay(client, booking, key), pay(client, booking, key)

    charge = SandboxCharge.objects.get()
    assert first.status_code == again.status_code == 302
    assert first.url == again.url == reverse("payments:sandbox-checkout", args=[charge.pk])
    payment = Payment.objects.get()
    assert (payment.booking_id, payment.status, payment.amount) == (
        booking.pk,
        PaymentStatus.PENDING,
        Decimal("208.00"),
    )
    # The provider's page sends the customer back to the booking.
    assert detail_url(booking).encode() in client.get(first.url).content


def test_the_booking_page_shows_payment_pending_until_the_webhook_confirms(
    client, customer, flight
):
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(detail_url(booking))))

    pending = client.get(detail_url(booking))
    assert b"Payment pending" in pending.content
    assert b'id="pay-form"' not in pending.content  # no second payment while one is under way
    assert reverse("bookings:progress", args=[booking.pk]).encode() in pending.content
    before = progress(client, booking)

    confirm_payment(payment_id=Payment.objects.get().pk, reference="ch_ok")

    assert progress(client, booking) != before
    issuing = client.get(detail_url(booking))
    assert b"Booking confirmed" in issuing.content and b"being issued" in issuing.content
    issued = progress(client, booking)

    issue_tickets(booking_id=booking.pk)

    assert progress(client, booking) != issued
    page = client.get(detail_url(booking))
    tickets = list(Ticket.objects.filter(booking=booking).order_by("pk"))
    assert len(tickets) == 2
    html = page.content.decode()
    for ticket in tickets:
        png = reverse("bookings:ticket-png", args=[booking.pk, ticket.pk])
        pdf = reverse("bookings:ticket-pdf", args=[booking.pk, ticket.pk])
        assert f'src="{png}"' in html and f'href="{pdf}"' in html
        assert client.get(png)["Content-Type"] == "image/png"
    assert "data-poll-url" not in html  # nothing left to wait for


def test_a_declined_payment_says_so_and_offers_pay_again(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(detail_url(booking))))
    charge = SandboxCharge.objects.get()
    sandbox.complete_checkout(charge_id=charge.pk, card_number="4000000000000002", approve=True)
    fail_payment(payment_id=Payment.objects.get().pk, reason="card_declined")

    page = client.get(detail_url(booking))

    assert b"Payment declined" in page.content and b"Your card was declined" in page.content
    assert b'id="pay-form"' in page.content
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.HELD
    # A new attempt is a new payment.
    assert pay(client, booking, pay_key(page)).status_code == 302
    assert Payment.objects.count() == 2


def test_paying_for_an_expired_hold_says_hold_expired_and_charges_nothing(client, customer, flight):
    booking = hold(customer, flight)
    client.force_login(customer)
    key = pay_key(client.get(detail_url(booking)))
    Booking.objects.filter(pk=booking.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    response = client.post(
        reverse("payments:checkout", args=[booking.pk]), {"idempotency_key": key}, follow=True
    )

    assert any(m.startswith("Hold expired") for m in messages_of(response))
    assert Payment.objects.count() == 0 and SandboxCharge.objects.count() == 0


def test_a_second_payment_while_one_is_in_progress_is_refused_with_a_message(
    client, customer, flight
):
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(detail_url(booking))))
    # A request still running (PROCESSING) is not disturbed...
    Payment.objects.update(status=PaymentStatus.PROCESSING)

    response = client.post(
        reverse("payments:checkout", args=[booking.pk]),
        {"idempotency_key": "another-key-0123456789"},
        follow=True,
    )

    assert any("already in progress" in m for m in messages_of(response))
    assert Payment.objects.count() == 1
    assert b"Continue to the payment page" in response.content


def test_pressing_pay_again_replaces_an_abandoned_checkout(client, customer, flight):
    """...but a checkout the customer walked away from (PENDING) is cancelled at the provider
    and replaced, instead of blocking the booking forever."""
    booking = hold(customer, flight)
    client.force_login(customer)
    pay(client, booking, pay_key(client.get(detail_url(booking))))
    old = Payment.objects.get()

    response = client.post(
        reverse("payments:checkout", args=[booking.pk]),
        {"idempotency_key": "another-key-0123456789"},
    )

    new = Payment.objects.exclude(pk=old.pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "payments:sandbox-checkout", args=[new.gateway_reference]
    )
    old.refresh_from_db()
    assert old.status == PaymentStatus.FAILED
    assert SandboxCharge.objects.get(pk=old.gateway_reference).status == "canceled"


@pytest.mark.parametrize("form", [{}, {"idempotency_key": ""}, {"idempotency_key": "short"}])
def test_a_pay_post_without_a_proper_key_changes_nothing(client, customer, flight, form):
    booking = hold(customer, flight)
    client.force_login(customer)
    response = client.post(reverse("payments:checkout", args=[booking.pk]), form, follow=True)
    assert any("payment form was incomplete" in m for m in messages_of(response))
    assert Payment.objects.count() == 0


def test_payment_pages_of_someone_elses_booking_are_404_and_change_nothing(
    client, customer, other_customer, flight
):
    booking = confirmed_with_tickets(client, customer, flight)
    held = hold(customer, flight, seats=("20A",))
    client.force_login(other_customer)
    key = "k" * 32
    assert pay(client, held, key).status_code == 404
    assert client.get(reverse("payments:cancel", args=[booking.pk])).status_code == 404
    post = client.post(reverse("payments:cancel", args=[booking.pk]), {"quoted_refund": "208.00"})
    assert post.status_code == 404
    assert client.get(reverse("bookings:progress", args=[booking.pk])).status_code == 404
    assert Payment.objects.count() == 1
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert Refund.objects.count() == 0


def test_anonymous_pay_goes_to_login(client, customer, flight):
    booking = hold(customer, flight)
    response = client.post(
        reverse("payments:checkout", args=[booking.pk]), {"idempotency_key": "k" * 32}
    )
    assert response.status_code == 302 and response.url.startswith(reverse("login"))
    assert Payment.objects.count() == 0


# --- cancelling ------------------------------------------------------------------------------


def test_cancel_shows_the_refund_first_then_cancels_and_shows_it(client, customer, flight):
    booking = confirmed_with_tickets(client, customer, flight)
    url = reverse("payments:cancel", args=[booking.pk])
    assert url.encode() in client.get(reverse("bookings:mine")).content

    step = client.get(url)

    assert step.status_code == 200
    assert "we refund <strong>€208.00</strong> (100%)" in step.content.decode()
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED  # only a GET

    done = client.post(url, {"quoted_refund": "208.00"}, follow=True)

    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    refund = Refund.objects.get()
    assert (refund.amount, refund.status) == (Decimal("208.00"), "PENDING")
    assert any("refund of €208.00" in m for m in messages_of(done))
    assert (
        b"Booking cancelled" in done.content
        and "Refund of <strong>€208.00</strong>".encode() in done.content
    )
    assert b"on its way" in done.content
    assert Seat.objects.filter(sale=flight.sale, status=SeatStatus.SOLD).count() == 0
    assert check_inventory(sale_id=flight.sale_id) == []


def test_cancel_with_a_changed_quote_asks_again_and_changes_nothing(client, customer, flight):
    booking = confirmed_with_tickets(client, customer, flight)
    # Departure moved closer since the page was opened: 50 % now, not 100 %.
    Flight.objects.filter(pk=flight.pk).update(departure_at=timezone.now() + timedelta(days=3))

    response = client.post(
        reverse("payments:cancel", args=[booking.pk]), {"quoted_refund": "208.00"}
    )

    assert response.status_code == 400
    assert any("changed to €104.00" in m for m in messages_of(response))
    assert "we refund <strong>€104.00</strong> (50%)" in response.content.decode()
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert Refund.objects.count() == 0


@pytest.mark.parametrize("form", [{}, {"quoted_refund": "lots"}, {"quoted_refund": "-1"}])
def test_cancel_with_bad_input_changes_nothing(client, customer, flight, form):
    booking = confirmed_with_tickets(client, customer, flight)
    response = client.post(reverse("payments:cancel", args=[booking.pk]), form)
    assert response.status_code == 400 and messages_of(response)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED


def test_cancel_after_departure_is_refused_with_a_clear_message(client, customer, flight):
    booking = confirmed_with_tickets(client, customer, flight)
    Flight.objects.filter(pk=flight.pk).update(status=FlightStatus.DEPARTED)
    url = reverse("payments:cancel", args=[booking.pk])

    step = client.get(url)
    assert b"already departed" in step.content and b'name="quoted_refund"' not in step.content

    response = client.post(url, {"quoted_refund": "0.00"}, follow=True)
    assert any("already departed" in m for m in messages_of(response))
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    assert Refund.objects.count() == 0
