"""End to end in headless Chromium (Debian's), against uvicorn, PostgreSQL and Redis.

The `browser` fixture is in conftest.py.  Playwright's sync API keeps an event loop running
in the test thread, so service calls that broadcast after commit (async_to_sync) run in a
helper thread (`off_loop`), and plain ORM calls in the test thread are allowed with
DJANGO_ALLOW_ASYNC_UNSAFE.
"""

from __future__ import annotations

import re
import threading
import time
from zoneinfo import ZoneInfo

import pytest
from django.db import connections
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from bookings.customer_holds import hold_seats
from bookings.lifecycle import expire_holds
from bookings.models import Booking, BookingStatus
from flights.models import Seat, SeatStatus
from flights.services import check_inventory
from tests.factories import FlightFactory, UserFactory
from tests.pages.conftest import shot, start_asgi_server, stop_asgi_server

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def off_loop(fn, *args, **kwargs):
    """Run a service call in its own thread (and connection), return its result."""
    outcome = {}

    def run():
        try:
            outcome["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # re-raised in the test thread
            outcome["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("result")


def logged_in_page(browser, server, user, **context_args):
    client = Client()
    client.force_login(user)
    context = browser.new_context(**context_args)
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": server.url}]
    )
    return context.new_page()


def open_picker(page, server, flight, passengers=2, fare="ECONOMY"):
    page.goto(f"{server.url}/flights/{flight.pk}/seats/?fare={fare}&passengers={passengers}")
    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")


def pick_and_hold(page, seats, names):
    for seat in seats:
        page.click(f"#seat-{seat}")
    for i, name in enumerate(names, start=1):
        page.fill(f"#name-{i}", name)
    page.click("#hold-button")
    expect(page.locator("h1")).to_have_text("Your seats are held")


def seconds_left(page) -> int:
    minutes, seconds = page.locator("#countdown").inner_text().split(":")
    return int(minutes) * 60 + int(seconds)


# --- the journey ----------------------------------------------------------------------------


def test_sign_up_search_pick_two_seats_by_keyboard_and_hold_with_countdown(browser, asgi_server):
    flight = FlightFactory(code="SK501")
    day = flight.departure_at.astimezone(ZoneInfo("Asia/Ho_Chi_Minh")).date()
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()

    page.goto(asgi_server.url + "/accounts/signup/")
    page.fill("#id_username", "ana")
    page.fill("#id_email", "ana@example.com")
    page.fill("#id_password1", "seats-never-twice-42")
    page.fill("#id_password2", "seats-never-twice-42")
    page.click("button:has-text('Sign up')")
    expect(page.locator(".messages")).to_contain_text("Welcome, ana")

    page.select_option("#id_origin", "SGN")
    page.select_option("#id_destination", "HAN")
    page.fill("#id_date", day.isoformat())
    page.fill("#id_passengers", "2")
    page.click("button:has-text('Search')")
    card = page.locator("li.flight", has_text="SK501")
    expect(card).to_contain_text("€89.00")
    expect(card).to_contain_text("168 seats left")
    shot(page, "01-search-results")
    page.get_by_label("Choose seats: Economy on flight SK501").click()

    expect(page.locator("#live-state")).to_have_attribute("data-state", "live")
    # Keyboard only: focus 12A, Space picks it, ArrowRight moves to 12B, Space picks it.
    page.focus("#seat-12A")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#seat-12B")).to_be_focused()
    page.keyboard.press("Space")
    expect(page.locator("#seat-12A")).to_be_checked()
    expect(page.locator("#seat-12B")).to_be_checked()
    expect(page.locator("#seat-12C")).to_be_disabled()  # the party has its two seats
    expect(page.locator("#selection")).to_contain_text("Seats 12A, 12B (2 of 2), €208.00")
    expect(page.locator("#seat-12A")).to_have_attribute(
        "aria-label", "Seat 12A, window, extra legroom, plus €15.00, selected"
    )
    page.fill("#name-1", "Ana Lima")
    page.fill("#name-2", "Bo Chen")
    shot(page, "02-seat-picker")
    page.check("#exit-row-confirmed")  # row 12 is an exit row
    page.click("#hold-button")

    expect(page.locator("h1")).to_have_text("Your seats are held")
    expect(page.locator("#countdown")).to_have_text(re.compile(r"^(09:[0-5]\d|10:00)$"))
    first = seconds_left(page)
    time.sleep(2.2)
    assert 1 <= first - seconds_left(page) <= 3  # it counts down, live
    expect(page.locator("table.passengers")).to_contain_text("Ana Lima")
    expect(page.locator("table.passengers")).to_contain_text("12B")
    shot(page, "03-hold-page")

    booking = Booking.objects.get(customer__username="ana")
    assert booking.status == BookingStatus.HELD and booking.seat_count == 2
    page.click("text=All my bookings")
    expect(page.locator(f"[data-booking='{booking.pk}']")).to_have_attribute("data-status", "HELD")
    shot(page, "04-my-bookings")

    page.click("button:has-text('Log out')")
    page.click("text=Log in")
    page.fill("#id_username", "ana")
    page.fill("#id_password", "seats-never-twice-42")
    page.click("button:has-text('Log in')")
    page.click("text=My bookings")
    page.get_by_label("Give up hold on flight SK501").click()
    expect(page.locator(".messages")).to_contain_text(
        "Hold cancelled. Seats 12A, 12B are free again."
    )
    assert check_inventory(sale_id=flight.sale_id) == []


def test_seat_picker_fits_a_phone_screen(browser, asgi_server):
    flight = FlightFactory()
    page = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True).new_page()
    open_picker(page, asgi_server, flight)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    box = page.locator("label[for=seat-30F]").bounding_box()
    assert box["x"] + box["width"] <= 360 and box["width"] >= 30  # reachable, finger-sized
    shot(page, "05-seat-picker-phone")


# --- two browsers, one flight ----------------------------------------------------------------


def test_a_seat_held_in_one_browser_turns_unavailable_in_the_other(browser, asgi_server):
    flight = FlightFactory()
    ana, bo = UserFactory(), UserFactory()
    first = logged_in_page(browser, asgi_server, ana)
    second = logged_in_page(browser, asgi_server, bo)
    open_picker(first, asgi_server, flight)
    open_picker(second, asgi_server, flight)
    second.click("#seat-15A")
    second.click("#seat-15B")

    pick_and_hold(first, ["15A", "15B"], ["Ana Lima", "Al Lima"])
    held_at = time.monotonic()
    expect(second.locator("#seat-15A")).to_be_disabled(timeout=2000)
    expect(second.locator("#seat-15B")).to_be_disabled(timeout=2000)
    assert time.monotonic() - held_at < 2.0
    expect(second.locator("#seat-15A")).not_to_be_checked()
    expect(second.locator("#seat-notice")).to_have_text(
        "Seat 15A, 15B was just taken by someone else. Please pick another."
    )
    shot(second, "06-seat-taken-live")

    # The second customer insists (a stale form): the server says no, and nothing changes.
    second.evaluate("""() => {
        for (const no of ["15A", "15B"]) {
            const box = document.getElementById("seat-" + no);
            box.disabled = false; box.checked = true;
        }
    }""")
    second.fill("#name-1", "Bo Chen")
    second.fill("#name-2", "Cy Chen")
    second.click("#hold-button")
    expect(second.locator(".messages")).to_contain_text(
        "Seat just taken. Seat 15A; seat 15B were just taken by someone else."
    )
    expect(second.locator("#seat-15A")).to_be_disabled()
    shot(second, "07-seat-just-taken-message")
    assert not Booking.objects.filter(customer=bo).exists()
    assert set(
        Seat.objects.filter(sale=flight.sale, status=SeatStatus.HELD).values_list(
            "seat_no", flat=True
        )
    ) == {"15A", "15B"}
    assert check_inventory(sale_id=flight.sale_id) == []


# --- expiry ----------------------------------------------------------------------------------


def test_an_expiring_hold_shows_expiry_and_frees_the_seats_live(browser):
    server = start_asgi_server("short-ttl", HOLD_TTL_SECONDS="6")
    try:
        flight = FlightFactory()
        holder = logged_in_page(browser, server, UserFactory())
        watcher = browser.new_context().new_page()  # watching a seat map needs no login
        open_picker(holder, server, flight, passengers=1)
        open_picker(watcher, server, flight, passengers=1)

        pick_and_hold(holder, ["18C"], ["Ana Lima"])
        expect(watcher.locator("#seat-18C")).to_be_disabled(timeout=2000)
        expect(holder.locator("#hold-expired")).to_be_visible(timeout=9000)
        expect(holder.locator("#hold-expired")).to_contain_text("Hold expired")
        expect(holder.locator("h1")).to_have_text("Your hold has expired")
        expect(holder.locator("#hold-actions")).to_be_hidden()
        shot(holder, "08-hold-expired")

        # The page counts down in whole seconds and may say "expired" a moment before the
        # server's deadline; the sweep only takes holds whose deadline has passed.
        expires_at = off_loop(lambda: Booking.objects.get(sale_id=flight.sale_id).expires_at)
        time.sleep(max(0.0, (expires_at - timezone.now()).total_seconds()) + 0.05)
        assert off_loop(expire_holds) == 1
        freed_at = time.monotonic()
        expect(watcher.locator("#seat-18C")).to_be_enabled(timeout=2000)
        assert time.monotonic() - freed_at < 2.0
        shot(watcher, "09-seat-freed-live")
        holder.reload()
        expect(holder.locator("h1")).to_have_text("Your hold has expired")
        assert check_inventory(sale_id=flight.sale_id) == []
    finally:
        stop_asgi_server(server)


# --- at-most-once delivery: gaps and reconnects ----------------------------------------------


def test_a_lost_message_is_noticed_by_the_version_gap_and_resynced(
    browser, asgi_server, monkeypatch
):
    import bookings.live

    flight = FlightFactory()
    page = browser.new_context().new_page()
    open_picker(page, asgi_server, flight, passengers=1)
    page.wait_for_timeout(500)  # the snapshot loaded on connect is in
    snapshots = []
    page.on("request", lambda r: snapshots.append(r.url) if "seatmap.json" in r.url else None)

    # This change's message is lost in the channel layer: the version moves, nothing is sent.
    with monkeypatch.context() as patch:
        patch.setattr(bookings.live, "get_channel_layer", lambda: None)
        off_loop(
            hold_seats,
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["25A"],
        )
    page.wait_for_timeout(500)
    expect(page.locator("#seat-25A")).to_be_enabled()  # the page cannot know yet
    snapshots.clear()  # forget the snapshot every connect loads
    off_loop(
        hold_seats,
        customer=UserFactory(),
        sale_id=flight.sale_id,
        fare_class="ECONOMY",
        seat_numbers=["26A"],
    )
    expect(page.locator("#seat-26A")).to_be_disabled(timeout=2000)
    # 25A's change never arrived as a message: only the snapshot can have brought it.
    expect(page.locator("#seat-25A")).to_be_disabled(timeout=2000)
    assert snapshots, "the gap must trigger a snapshot reload"


def test_after_a_reconnect_the_page_resyncs(browser):
    server = start_asgi_server("restart")
    port = server.host_port.rsplit(":", 1)[1]
    try:
        flight = FlightFactory()
        page = browser.new_context().new_page()
        open_picker(page, server, flight, passengers=1)
        stop_asgi_server(server)
        expect(page.locator("#live-state")).to_have_attribute("data-state", "reconnecting")
        # Changed while the page could not listen: no message will ever carry this.
        off_loop(
            hold_seats,
            customer=UserFactory(),
            sale_id=flight.sale_id,
            fare_class="ECONOMY",
            seat_numbers=["27F"],
        )
        server = start_asgi_server("restart", port=port)
        expect(page.locator("#live-state")).to_have_attribute("data-state", "live", timeout=20000)
        expect(page.locator("#seat-27F")).to_be_disabled(timeout=2000)
        shot(page, "10-resynced-after-reconnect")
    finally:
        stop_asgi_server(server)


# --- origins ---------------------------------------------------------------------------------

PROBE = """(url) => new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.onopen = () => { ws.close(); resolve("open"); };
    ws.onerror = () => resolve("refused");
})"""


def test_a_websocket_from_a_foreign_origin_is_refused(browser, asgi_server):
    flight = FlightFactory()
    ws_url = asgi_server.ws_url(f"/ws/flights/{flight.pk}/seats/")
    page = browser.new_context().new_page()
    page.route(
        "http://evil.example/**",
        lambda route: route.fulfill(
            status=200, content_type="text/html", body="<h1>Not Seatkeeper</h1>"
        ),
    )
    page.goto("http://evil.example/")
    assert page.evaluate(PROBE, ws_url) == "refused"
    # Control: the very same probe from a Seatkeeper page connects.
    page.goto(asgi_server.url + "/")
    assert page.evaluate(PROBE, ws_url) == "open"
