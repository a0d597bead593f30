"""Issue 14's customer journey for a concert in headless Chromium, every part real (uvicorn,
a Celery worker for the sandbox webhook, tickets and refunds, PostgreSQL, Redis):

find the concert -> pick two seats in the venue plan by keyboard -> hold -> pay in the
sandbox -> QR tickets with section, row and seat -> cancel with the refund shown first ->
the refund paid back.  And the picker on a phone, checked by axe."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus, Seat, SeatStatus, Ticket
from payments.models import Payment, PaymentStatus, Refund, RefundStatus
from tests.events.factories import EventFactory, VenueFactory
from tests.factories import UserFactory
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(180),
]

QR_IMAGES_LOADED = """() => {
  const images = Array.from(document.querySelectorAll("img.qr"));
  return images.length === 2 && images.every((i) => i.complete && i.naturalWidth > 0);
}"""
FOCUSED_SEAT = "() => document.activeElement && document.activeElement.dataset.seat || null"


def test_find_a_concert_pick_seats_by_keyboard_hold_pay_tickets_cancel_refund(
    browser, asgi_server, celery_worker_process
):
    event = EventFactory(name="Night Symphony", venue=VenueFactory(city="Potsdam"))
    EventFactory(name="Other concert", venue=VenueFactory(city="Munich"))
    customer = UserFactory(username="concertgoer")
    page = logged_in_page(browser, asgi_server, customer, viewport={"width": 1280, "height": 900})
    page.set_default_timeout(30_000)

    # Find the concert.
    page.goto(asgi_server.url + "/events/")
    page.select_option("#id_city", "Potsdam")
    page.click(".search-form button[type=submit]")
    expect(page.locator(".event-name")).to_have_text(["Night Symphony"])
    page.click("text=Night Symphony")
    expect(page.locator("h1")).to_have_text("Night Symphony")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")

    # The plan is one Tab stop: Tab reaches the first free seat, arrows move, Space picks.
    page.locator("#venue-help").click()
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED_SEAT):
            break
    assert page.evaluate(FOCUSED_SEAT) == "1-1-1"  # Stalls (section 1), row 1, seat 1
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # picks like Space, never submits
    assert page.evaluate(FOCUSED_SEAT) == "1-1-3"
    page.keyboard.press("ArrowDown")
    assert page.evaluate(FOCUSED_SEAT) == "1-2-3"
    expect(page.locator("#seat-1-1-2")).to_be_checked()
    expect(page.locator("#seat-1-1-3")).to_be_checked()
    expect(page.locator("#seat-1-1-3")).to_have_attribute(
        "aria-label", "Stalls, row 1, seat 3, category A, €80.00, selected"
    )
    expect(page.locator("#selection")).to_contain_text("2 seats, category A")
    expect(page.locator("#selection")).to_contain_text("€160.00")
    # A seat of another category is refused with the reason (one category per booking).
    page.click("#seat-2-A-1", force=True)  # aria-disabled: focusable, says why
    expect(page.locator("#seat-2-A-1")).not_to_be_checked()
    expect(page.locator("#seat-limit")).to_contain_text("one price category")
    page.keyboard.press("Tab")  # leaves the plan: the next stop is the name field
    assert page.evaluate(FOCUSED_SEAT) is None
    page.fill("#ticket-name", "Clara Schumann")
    shot(page, "20-event-picker")
    assert_no_serious_axe_violations(page)
    page.click("#hold-button")

    expect(page.locator("h1")).to_have_text("Your seats are held")
    expect(page.locator(".sale-summary")).to_contain_text("Night Symphony")
    expect(page.locator(".passengers")).to_contain_text("Stalls, row 1, seat 2")
    booking = Booking.objects.get(customer=customer)
    assert booking.status == BookingStatus.HELD and booking.fare_class == "A"
    assert set(
        Seat.objects.filter(sale=event.sale, status=SeatStatus.HELD).values_list(
            "seat_no", flat=True
        )
    ) == {"1-1-2", "1-1-3"}

    # Pay in the sandbox's hosted checkout.
    page.click("#pay-form button")
    expect(page.locator("[data-testid=amount]")).to_have_text("€160.00")
    page.fill("#card_number", "4242424242424242")
    page.click("button:has-text('Pay €160.00')")
    expect(page.locator("[data-testid=charge-status]")).to_have_text("This checkout is paid.")

    # Back at the booking: the QR tickets say section, row and seat.
    expect(page.locator("h1")).to_have_text("Booking confirmed")
    page.wait_for_function(QR_IMAGES_LOADED)
    tickets = page.locator(".ticket")
    expect(tickets).to_have_count(2)
    expect(tickets.nth(0)).to_contain_text("Stalls, row 1, seat 2")
    expect(tickets.nth(1)).to_contain_text("Stalls, row 1, seat 3")
    expect(page.locator(".tickets")).to_contain_text("Clara Schumann")
    shot(page, "21-event-tickets")
    assert_no_serious_axe_violations(page)
    assert Ticket.objects.filter(booking=booking).count() == 2

    # Cancel: the refund is shown first.
    page.click("text=Cancel this booking…")
    expect(page.locator("#refund-quote")).to_contain_text("€160.00")
    expect(page.locator("#cancel-step")).to_contain_text("Night Symphony")
    assert_no_serious_axe_violations(page)
    page.click("button:has-text('Cancel booking and refund €160.00')")
    expect(page.locator("h1")).to_have_text("Booking cancelled")
    refund_line = page.locator(".refund")
    expect(refund_line).to_contain_text("Refund of €160.00")
    expect(refund_line).to_have_attribute("data-status", "SUCCEEDED")
    shot(page, "22-event-refunded")
    refund = Refund.objects.get()
    assert (refund.amount, refund.status) == (Decimal("160.00"), RefundStatus.SUCCEEDED)
    assert Payment.objects.get(booking=booking).status == PaymentStatus.REFUNDED
    assert not Seat.objects.filter(sale=event.sale).exclude(status=SeatStatus.AVAILABLE).exists()


def test_the_seat_picker_on_a_phone_with_live_updates_and_no_serious_axe_violations(
    browser, asgi_server
):
    event = EventFactory(name="Phone concert")
    customer = UserFactory(username="phone")
    page = logged_in_page(
        browser,
        asgi_server,
        customer,
        viewport={"width": 360, "height": 740},
        is_mobile=True,
        has_touch=True,
    )
    page.goto(f"{asgi_server.url}/events/{event.pk}/")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    expect(page.locator("input.seat-input")).to_have_count(24 + 10)
    # The plan scrolls inside its sections; the page itself never scrolls sideways.
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    seat = page.locator("#seat-1-4-6")
    seat.evaluate("el => el.scrollIntoView({block: 'center', inline: 'center'})")
    seat.tap()
    expect(page.locator("#seat-1-4-6")).to_be_checked()
    expect(page.locator("#bar-selection")).to_contain_text("€45.00")
    assert_no_serious_axe_violations(page)
    shot(page, "23-event-picker-phone")

    # Someone else holds a seat: it is shown taken at once.
    # (In its own thread, as in another web process: Playwright's loop runs in this one.)
    other = UserFactory()
    off_loop(
        hold_seats, customer=other, sale_id=event.sale_id, fare_class="B", seat_numbers=["1-4-5"]
    )
    expect(page.locator("#seat-1-4-5")).to_be_disabled()
    expect(page.locator("#seat-1-4-5")).to_have_attribute("aria-label", re.compile(", taken$"))
