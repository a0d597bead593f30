"""Issue 29, item 4, in Chromium at phone and desktop width: the seller lists their tickets
for resale on the booking page and sees its state; the first party on the waitlist is
offered them, names the tickets and pays on the pages; then the seller's page says the
tickets were resold (and refunded, less the fee), the buyer's that the booking is theirs.
axe finds nothing serious on any of these pages."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from bookings.models import Booking, BookingStatus, Resale, ResaleStatus, TicketStatus
from payments.models import Refund
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page, off_loop
from tests.payments.resale_setup import sold_out_event_with_paid_booking, wait

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}


def fits(page, viewport) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"]


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366", "390"])
def test_resale_through_the_waitlist_on_the_pages(
    browser, asgi_server, celery_worker_process, viewport
):
    tag = viewport["width"]
    r = off_loop(sold_out_event_with_paid_booking, fee_percent="10")
    buyer, _ = off_loop(wait, r.event)
    seller_page = logged_in_page(browser, asgi_server, r.seller, viewport=viewport)
    seller_url = f"{asgi_server.url}/bookings/{r.booking.pk}/"

    # The seller: the offer to resell, then its state.
    seller_page.goto(seller_url)
    expect(seller_page.locator("#resale-title")).to_have_text("Can no longer go?")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)
    seller_page.locator("#resale-list").click()
    expect(seller_page.locator(".messages, .message").first).to_contain_text(
        "Your tickets are offered to the waitlist"
    )
    expect(seller_page.locator("#resale-state")).to_contain_text(
        "Someone on the waitlist has been offered your tickets."
    )
    expect(seller_page.locator("#resale-state")).to_contain_text("less a fee of")
    expect(seller_page.locator("#resale-withdraw")).to_be_visible()
    shot(seller_page, f"resale-listed-{tag}")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)

    # The buyer: the waitlist's offer is a hold of the seller's seats; names, then payment.
    resale = Resale.objects.get(booking=r.booking)
    offer = Booking.objects.get(pk=resale.offer_id)
    assert offer.customer_id == buyer.pk and offer.status == BookingStatus.HELD
    buyer_page = logged_in_page(browser, asgi_server, buyer, viewport=viewport)
    buyer_page.goto(f"{asgi_server.url}/bookings/{offer.pk}/")
    expect(buyer_page.locator("h1")).to_have_text("Your tickets are held")
    fits(buyer_page, viewport)
    assert_no_serious_axe_violations(buyer_page)
    buyer_page.fill("#pname-1", "Grace Hopper")
    buyer_page.fill("#pname-2", "Edsger Dijkstra")
    buyer_page.locator("#names-form button[type=submit]").click()
    buyer_page.locator("#pay-form button").click()
    buyer_page.fill("#card_number", "4242424242424242")
    buyer_page.click("button:has-text('Pay')")
    expect(buyer_page.locator("[data-testid=charge-status]")).to_contain_text("paid")
    expect(buyer_page).to_have_url(re.compile(rf"/bookings/{offer.pk}/$"), timeout=15000)
    expect(buyer_page.locator("h1")).to_have_text("Booking confirmed", timeout=30000)
    shot(buyer_page, f"resale-bought-{tag}")
    fits(buyer_page, viewport)
    assert_no_serious_axe_violations(buyer_page)

    # The seller again: resold, refunded less the fee, their tickets void.
    seller_page.goto(seller_url)
    expect(seller_page.locator("h1")).to_have_text("Your tickets were resold")
    expect(seller_page.locator(".ticket-void").first).to_contain_text("VOID")
    shot(seller_page, f"resale-sold-{tag}")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)
    resale.refresh_from_db()
    assert resale.status == ResaleStatus.SOLD
    refund = Refund.objects.get(payment__booking=r.booking)
    assert refund.amount == resale.face_value - resale.fee
    assert set(r.booking.tickets.values_list("status", flat=True)) == {TicketStatus.REVOKED}


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1366", "390"])
def test_reselling_one_ticket_of_two_on_the_pages(
    browser, asgi_server, celery_worker_process, viewport
):
    """The seller ticks one ticket of two; only it is offered (to a party of one), and once
    bought the seller's page says one ticket was resold while the other stays valid."""
    tag = viewport["width"]
    r = off_loop(sold_out_event_with_paid_booking, fee_percent="10")
    buyer, _ = off_loop(wait, r.event, party_size=1)
    seller_page = logged_in_page(browser, asgi_server, r.seller, viewport=viewport)
    seller_url = f"{asgi_server.url}/bookings/{r.booking.pk}/"

    seller_page.goto(seller_url)
    choice = seller_page.locator(".resale-choice")
    expect(choice.locator("legend")).to_have_text("Which tickets can you no longer use?")
    boxes = choice.get_by_role("checkbox")
    expect(boxes).to_have_count(2)
    boxes.nth(0).uncheck()  # keeps Ada Lovelace's ticket, resells Alan Turing's
    expect(boxes.nth(1)).to_be_checked()
    shot(seller_page, f"resale-choose-{tag}")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)
    seller_page.locator("#resale-list").click()
    expect(seller_page.locator("#resale-state")).to_contain_text(
        "Someone on the waitlist has been offered your tickets."
    )
    expect(seller_page.locator("#resale-listed li")).to_have_count(1)
    expect(seller_page.locator("#resale-listed")).to_contain_text("Alan Turing")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)

    resale = Resale.objects.get(booking=r.booking)
    offer = Booking.objects.get(pk=resale.offer_id)
    assert (offer.customer_id, offer.seat_count) == (buyer.pk, 1)
    buyer_page = logged_in_page(browser, asgi_server, buyer, viewport=viewport)
    buyer_page.goto(f"{asgi_server.url}/bookings/{offer.pk}/")
    buyer_page.fill("#pname-1", "Grace Hopper")
    buyer_page.locator("#names-form button[type=submit]").click()
    buyer_page.locator("#pay-form button").click()
    buyer_page.fill("#card_number", "4242424242424242")
    buyer_page.click("button:has-text('Pay')")
    expect(buyer_page).to_have_url(re.compile(rf"/bookings/{offer.pk}/$"), timeout=15000)
    expect(buyer_page.locator("h1")).to_have_text("Booking confirmed", timeout=30000)

    seller_page.goto(seller_url)
    expect(seller_page.locator("h1")).to_have_text("Booking confirmed")
    expect(seller_page.locator("#resale-sold")).to_contain_text("1 ticket was resold")
    expect(seller_page.locator("table.passengers tbody tr")).to_have_count(1)
    expect(seller_page.locator("table.passengers")).to_contain_text("Ada Lovelace")
    shot(seller_page, f"resale-partly-sold-{tag}")
    fits(seller_page, viewport)
    assert_no_serious_axe_violations(seller_page)
    statuses = dict(r.booking.tickets.values_list("passenger_name", "status"))
    assert statuses == {"Ada Lovelace": TicketStatus.VALID, "Alan Turing": TicketStatus.REVOKED}
    refund = Refund.objects.get(payment__booking=r.booking)
    assert refund.amount == Decimal("72.00")
