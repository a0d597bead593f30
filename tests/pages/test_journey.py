"""Issue 6's whole journey in headless Chromium, with every part real: uvicorn serving the
pages and the webhook, a Celery worker subprocess (sandbox webhook delivery over HTTP, outbox
relay, ticket issuing, refunds), PostgreSQL and Redis.

search -> pick two seats -> hold -> pay in the sandbox's hosted checkout -> back to the
booking, which waits for the webhook -> confirmation with two QR codes -> cancel with the
refund shown first -> the refund paid back."""

from __future__ import annotations

from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from bookings.models import Booking, BookingStatus, Ticket, TicketStatus
from flights.models import Seat, SeatStatus
from flights.services import check_inventory
from payments.models import Payment, PaymentStatus, Refund, RefundStatus, SandboxEvent
from tests.factories import FlightFactory, UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]

QR_IMAGES_LOADED = """() => {
  const images = Array.from(document.querySelectorAll("img.qr"));
  return images.length === 2 && images.every((i) => i.complete && i.naturalWidth > 0);
}"""


def test_search_pick_hold_pay_confirm_with_two_qr_codes_cancel_and_refund(
    browser, asgi_server, celery_worker_process
):
    flight = FlightFactory(code="SK610")
    customer = UserFactory(username="journey")
    day = flight.departure_at.astimezone(ZoneInfo("Asia/Ho_Chi_Minh")).date()
    # Signed in through a session cookie (sign-up and log-in have their own browser test).
    page = logged_in_page(browser, asgi_server, customer, viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)

    # Search.
    page.goto(asgi_server.url + "/")
    page.select_option("#id_origin", "SGN")
    page.select_option("#id_destination", "HAN")
    page.fill("#id_date", day.isoformat())
    page.fill("#id_passengers", "2")
    page.click("button:has-text('Search')")
    page.get_by_label("Choose seats: Economy on flight SK610").click()

    # Pick two seats, hold them.
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.click("#seat-12A")
    page.click("#seat-12B")
    page.fill("#name-1", "Ana Lima")
    page.fill("#name-2", "Bo Chen")
    page.check("#exit-row-confirmed")  # row 12 is an exit row
    page.click("#hold-button")
    expect(page.locator("h1")).to_have_text("Your seats are held")
    shot(page, "10-journey-hold")

    # Pay in the sandbox's hosted checkout; a double click is still one payment.
    page.locator("#pay-form button").dblclick()
    expect(page.locator("[data-testid=amount]")).to_have_text("€208.00")
    assert_no_serious_axe_violations(page)  # the checkout page
    page.fill("#card_number", "4242424242424242")
    shot(page, "11-journey-sandbox-checkout")
    page.click("button:has-text('Pay €208.00')")
    expect(page.locator("[data-testid=charge-status]")).to_have_text("This checkout is paid.")
    expect(page.locator("#returning")).to_contain_text("Taking you back to Seatkeeper")
    # No click: the checkout returns to Seatkeeper by itself.

    # Back at the booking: pending until the worker's webhook lands, then the tickets.
    expect(page.locator("h1")).to_have_text("Booking confirmed")
    expect(page.locator("img.qr")).to_have_count(2)
    page.wait_for_function(QR_IMAGES_LOADED)
    expect(page.locator(".ticket")).to_have_count(2)
    expect(page.locator(".tickets")).to_contain_text("Ana Lima")
    expect(page.locator(".tickets")).to_contain_text("Download boarding pass (PDF)")
    shot(page, "12-journey-confirmation")
    assert_no_serious_axe_violations(page)

    booking = Booking.objects.get(customer__username="journey")
    payment = Payment.objects.get(booking=booking)  # one payment despite the double click
    assert booking.status == BookingStatus.CONFIRMED
    assert payment.status == PaymentStatus.SUCCEEDED
    event = SandboxEvent.objects.get()  # delivered by the worker, over HTTP, to uvicorn
    assert event.last_status == 200 and event.delivered_at is not None
    assert sorted(Ticket.objects.filter(booking=booking).values_list("seat_no", flat=True)) == [
        "12A",
        "12B",
    ]
    pdf_path = page.locator(".ticket a:has-text('PDF')").first.get_attribute("href")
    pdf = page.request.get(asgi_server.url + pdf_path)
    assert pdf.ok and pdf.body().startswith(b"%PDF")

    # Cancel: the refund is shown before anything happens.
    page.click("text=Cancel this booking…")
    expect(page.locator("#refund-quote")).to_contain_text("€208.00")
    shot(page, "13-journey-cancel-step")
    assert_no_serious_axe_violations(page)
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CONFIRMED
    page.click("button:has-text('Cancel booking and refund €208.00')")

    expect(page.locator("h1")).to_have_text("Booking cancelled")
    expect(page.locator(".messages")).to_contain_text("refund of €208.00")
    refund_line = page.locator(".refund")
    expect(refund_line).to_contain_text("Refund of €208.00")
    # The worker sends the refund to the gateway; the page notices by itself.
    expect(refund_line).to_have_attribute("data-status", "SUCCEEDED")
    expect(refund_line).to_contain_text("paid back to your card")
    shot(page, "14-journey-refunded")

    refund = Refund.objects.get()
    assert (refund.amount, refund.status) == (Decimal("208.00"), RefundStatus.SUCCEEDED)
    assert Payment.objects.get(pk=payment.pk).status == PaymentStatus.REFUNDED
    assert not Seat.objects.filter(sale=flight.sale, status=SeatStatus.SOLD).exists()

    def tickets_revoked():
        return set(Ticket.objects.filter(booking=booking).values_list("status", flat=True)) == {
            TicketStatus.REVOKED
        }

    for _ in range(50):  # the revocation is the worker's, a moment after the refund
        if tickets_revoked():
            break
        page.wait_for_timeout(200)
    assert tickets_revoked()
    assert check_inventory(sale_id=flight.sale_id) == []
