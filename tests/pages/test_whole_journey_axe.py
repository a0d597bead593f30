"""Issue 31, "Done when": the whole journey with axe at 0 serious and 0 critical in each of de,
ru and en, as ONE browser journey per language, every part real (uvicorn, a Celery worker that
delivers the sandbox's webhook and sends the refund, PostgreSQL, Redis):

search -> pick two exit-row seats (conditions confirmed) -> hold -> pay in the sandbox's
checkout -> the booking confirmed with its tickets -> cancel (the quote, then cancelled and
refunded) -> My bookings with a waitlist place -> a flight behind a waiting room (the queue
first, the room, then admitted with the turn's time left) -> the event picker zoomed in and
back to fit -> the staff's sale-day pages (admin index, flights, bookings, refunds, waiting
rooms, one flight's departure panel).

Every page is in the reader's language (`<html lang>`), passes axe with 0 serious and 0
critical violations, and is kept as a screenshot in test-artifacts/ (whole-journey-<lang>-*).
The customer's pages are also checked for English left (test_languages_browser's lists).
The Russian run asks for English in the browser and switches on the page, which stores the
account's language."""

from __future__ import annotations

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from bookings.customer_holds import hold_seats
from bookings.models import Booking, BookingStatus
from bookings.waitlist import join_waitlist
from flights.models import Seat
from languages.models import LanguagePreference
from languages.services import set_preferred_language
from payments.models import Refund, RefundStatus
from tests.factories import FlightFactory, StaffFactory, UserFactory, economy_only_layout
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot
from tests.pages.test_browser import logged_in_page
from tests.pages.test_languages_browser import (
    JOURNEY_ENGLISH,
    assert_in_language,
    catalogue_english,
    session_cookie,
)
from tests.pages.test_seat_plan_browser import wide_event, zoom
from waitroom.gate import cookie_name
from waitroom.staff import open_waiting_room
from waitroom.tokens import issue_token

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.timeout(420),
]

DESKTOP = {"width": 1366, "height": 900}
LOCALES = {"de": "de-DE", "ru": "ru-RU", "en": "en-US"}
SALE_DAY = [
    "/admin/",
    "/admin/flights/flight/",
    "/admin/bookings/booking/",
    "/admin/payments/refund/",
    "/admin/waitroom/waitingroom/",
]
PAID = {"de": "208,00\xa0€", "ru": "208,00\xa0€", "en": "€208.00"}


def checked(page, language: str, name: str) -> None:
    """In the language, axe clean, kept as a screenshot."""
    expect(page.locator("html")).to_have_attribute("lang", language)
    assert_no_serious_axe_violations(page)
    shot(page, f"whole-journey-{language}-{name}")


def sold_out_flight_with_a_waitlist_place(customer):
    sold_out = FlightFactory(code="SK711", layout=economy_only_layout(rows=1, overbook_limit=0))
    for seat in Seat.objects.filter(sale=sold_out.sale):
        hold_seats(
            customer=UserFactory(),
            sale_id=sold_out.sale_id,
            fare_class="ECONOMY",
            seat_numbers=[seat.seat_no],
        )
    join_waitlist(customer=customer, sale_id=sold_out.sale_id, fare_class="ECONOMY", party_size=2)


def sign_in(browser, server, customer, language, english):
    """The login page logged out, then signed in; the Russian reader switches on the page
    (the browser asks for English) and the switch is stored as the account's language."""
    locale = "en-US" if language == "ru" else LOCALES[language]
    context = browser.new_context(locale=locale, viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(server.url + "/accounts/login/")
    if language == "ru":
        page.select_option("#language-select", "ru")
        page.click("#language-switcher button")
    assert_in_language(page, language, english, "login")
    context.add_cookies([session_cookie(customer, server)])
    if language == "ru":
        page.goto(server.url + "/")
        page.select_option("#language-select", "ru")
        page.click("#language-switcher button")
        expect(page.locator("html")).to_have_attribute("lang", "ru")
        assert LanguagePreference.objects.get(user=customer).language == "ru"
    return page


@pytest.mark.parametrize("language", ["de", "ru", "en"])
def test_the_whole_journey_passes_axe_in_each_language(
    browser, asgi_server, celery_worker_process, language
):
    base = asgi_server.url
    english = sorted(
        set(catalogue_english(language) if language != "en" else []) | set(JOURNEY_ENGLISH)
    )
    customer = UserFactory(username=f"journey-{language}")
    flight = FlightFactory(code="SK710")
    sold_out_flight_with_a_waitlist_place(customer)
    page = sign_in(browser, asgi_server, customer, language, english)

    # Search and its results.
    day = flight.departure_at.astimezone(ZoneInfo("Asia/Ho_Chi_Minh")).date()
    page.goto(f"{base}/?origin=SGN&destination=HAN&date={day.isoformat()}&passengers=2")
    expect(page.locator(f"[data-flight={flight.code}]")).to_be_visible()
    assert_in_language(page, language, english, "results")

    # Pick two seats of an exit row, the conditions confirmed, then hold them.
    page.locator(f"[data-flight={flight.code}] .fare-economy a.button").click()
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    page.click("#seat-12A")
    page.click("#seat-12B")
    page.fill("#name-1", "Ana Lima")
    page.fill("#name-2", "Bo Chen")
    page.check("#exit-row-confirmed")
    assert_in_language(page, language, english, "seat-picker")
    page.click("#hold-button")
    expect(page.locator("#hold-timer")).to_be_visible()
    assert_in_language(page, language, english, "hold")

    # Pay in the sandbox's checkout; back at the booking once the worker's webhook lands.
    page.click("#pay-form button")
    expect(page.locator("[data-testid=amount]")).to_have_text(PAID[language])
    page.fill("#card_number", "4242424242424242")
    assert_in_language(page, language, english, "checkout")
    page.click("button[value=approve]")
    expect(page.locator("img.qr")).to_have_count(2, timeout=60_000)
    booking = Booking.objects.get(customer=customer, status=BookingStatus.CONFIRMED)
    assert_in_language(page, language, english, "tickets")

    # Cancel: the refund quote first, then cancelled, the refund paid back by the worker.
    page.click(f"a[href='/bookings/{booking.pk}/cancel/']")
    expect(page.locator("#refund-quote")).to_contain_text(PAID[language])
    assert_in_language(page, language, english, "cancel-quote")
    page.click("#cancel-step form button")
    expect(page.locator(".refund")).to_have_attribute("data-status", "SUCCEEDED", timeout=60_000)
    assert_in_language(page, language, english, "cancelled")
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED
    assert Refund.objects.get(payment__booking=booking).status == RefundStatus.SUCCEEDED

    # My bookings, with the waitlist place.
    page.goto(f"{base}/bookings/")
    expect(page.locator(".waitlist-entry")).to_have_count(1)
    assert_in_language(page, language, english, "my-bookings")

    # A flight behind a waiting room: the picker sends the shopper to the queue first.
    queued = FlightFactory(code="SK720")
    room = open_waiting_room(
        sale_id=queued.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    picker = f"{base}/flights/{queued.pk}/seats/?fare=ECONOMY&passengers=1"
    page.goto(picker)
    expect(page.locator("#go-to-queue")).to_be_visible()
    checked(page, language, "queue-first")
    page.goto(f"{base}/waiting-room/{room.pk}/")
    checked(page, language, "waiting-room")
    # Admitted: the picker, with the turn's time left.
    token = issue_token(
        room_id=room.pk, customer_id=customer.pk, expires_at=timezone.now() + timedelta(minutes=5)
    )
    page.context.add_cookies([{"name": cookie_name(room.pk), "value": token, "url": base}])
    page.goto(picker)
    expect(page.locator("#turn-left")).to_have_text(re.compile(r"^0[45]:\d\d$"))
    checked(page, language, "admitted-picker")

    # The event picker, zoomed in, then fitted again.
    event = wide_event()
    page.goto(f"{base}/events/{event.pk}/")
    expect(page.locator("[data-seat-plan]")).to_have_attribute("data-ready", "true")
    fitted = zoom(page)
    page.click("[data-zoom=in]")
    page.click("[data-zoom=in]")
    assert zoom(page) > fitted
    checked(page, language, "event-zoomed")
    page.click("[data-zoom=fit]")
    assert zoom(page) == pytest.approx(fitted)
    checked(page, language, "event-fitted")
    page.context.close()

    # The staff's sale-day pages, in the staff member's language.
    staff_member = StaffFactory()
    set_preferred_language(user_id=staff_member.pk, language=language)
    staff = logged_in_page(
        browser, asgi_server, staff_member, viewport=DESKTOP, locale=LOCALES[language]
    )
    staff.set_default_timeout(30_000)
    for path in [*SALE_DAY, f"/admin/flights/flight/{flight.pk}/departure/"]:
        response = staff.goto(base + path)
        assert response.status == 200, path
        checked(staff, language, path.strip("/").replace("/", "-") or "admin")
    staff.context.close()
