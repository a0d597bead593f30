"""The queue page live: real uvicorn, real websockets, real Redis channel layer, and
headless Chromium.  Two customers queue; one is admitted and moved on to the seat picker;
the other's position moves without a reload."""

from __future__ import annotations

import json
import uuid
from contextlib import ExitStack
from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from bookings.customer_holds import hold_seatless
from bookings.lifecycle import sell_held_booking
from bookings.models import Booking
from kernel.outbox import relay_outbox
from tests.pages.axe import assert_no_serious_axe_violations
from tests.pages.conftest import shot, start_asgi_server, stop_asgi_server
from tests.pages.test_browser import logged_in_page, off_loop
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining, queue, room_selectors
from waitroom.models import WaitingRoom

# One worker for the module under xdist: room_server starts once.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("waiting-room-live")]

PREFIX = f"wrlive-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def room_server(django_db_setup, django_db_blocker):
    """uvicorn with this module's waiting-room key prefix (the test process uses the same)."""
    with django_db_blocker.unblock():
        server = start_asgi_server("waiting-room", WAITING_ROOM_KEY_PREFIX=PREFIX)
    yield server
    stop_asgi_server(server)


@pytest.fixture
def same_prefix(settings):
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "KEY_PREFIX": PREFIX}
    yield
    client = queue.client()
    for key in client.scan_iter(f"{PREFIX}:*", count=1000):
        client.delete(key)


def two_in_line():
    """A protected flight, two customers in line (shuffled), nobody admitted yet."""
    flight = small_flight(rows=30)
    t0 = timezone.now() - timedelta(seconds=1)
    sale = protect(flight, opens_at=t0, rate=60, max_inside=1)
    first, second = make_customers(2)
    joining.join_queue(room_id=sale.pk, customer=first)
    joining.join_queue(room_id=sale.pk, customer=second)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle, no rate credit yet
    return flight, sale, first, second


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


def open_queue(server, sale, user, origin=None):
    return connect(
        server.ws_url(f"/ws/waiting-room/{sale.pk}/"),
        origin=origin or server.url,
        additional_headers={"Cookie": session_cookie(user)} if user else None,
        open_timeout=5,
    )


def test_positions_move_live_and_the_admitted_customer_is_told(room_server, same_prefix):
    _flight, sale, first, second = two_in_line()
    with open_queue(room_server, sale, first) as ws1, open_queue(room_server, sale, second) as ws2:
        snap1, snap2 = json.loads(ws1.recv(timeout=5)), json.loads(ws2.recv(timeout=5))
        assert {snap1["position"], snap2["position"]} == {1, 2}
        front, back = (ws1, ws2) if snap1["position"] == 1 else (ws2, ws1)

        tick = admission.admit_shoppers(room_id=sale.pk, now=timezone.now())
        assert len(tick.admitted) == 1

        admitted = json.loads(front.recv(timeout=5))
        moved = json.loads(back.recv(timeout=5))
    assert admitted["type"] == "status" and admitted["status"] == "ADMITTED"
    assert admitted["enterUrl"] == f"/waiting-room/{sale.pk}/enter/"
    assert moved["status"] == "WAITING" and moved["position"] == 1 and moved["ahead"] == 0


def test_a_reconnect_gets_a_fresh_snapshot(room_server, same_prefix):
    _flight, sale, first, second = two_in_line()
    admission.admit_shoppers(room_id=sale.pk, now=timezone.now())  # while nobody listens
    statuses = []
    for user in (first, second):
        with open_queue(room_server, sale, user) as ws:
            statuses.append(json.loads(ws.recv(timeout=5))["status"])
    assert sorted(statuses) == ["ADMITTED", "WAITING"]


@pytest.mark.parametrize("origin", ["http://evil.example", None])
def test_foreign_origins_and_anonymous_visitors_are_refused(room_server, same_prefix, origin):
    _flight, sale, first, _second = two_in_line()
    with pytest.raises(InvalidStatus) as refused:
        if origin:
            open_queue(room_server, sale, first, origin=origin)
        else:
            open_queue(room_server, sale, None)
    assert refused.value.response.status_code == 403


@pytest.mark.browser
def test_in_a_browser_one_is_admitted_and_the_others_place_moves(browser, room_server, same_prefix):
    flight, sale, first, second = off_loop(two_in_line)
    pages = {}
    for user in (first, second):
        page = logged_in_page(browser, room_server, user, viewport={"width": 390, "height": 844})
        page.goto(f"{room_server.url}/waiting-room/{sale.pk}/")
        pages[user.pk] = page
    positions = {}
    for user_id, page in pages.items():
        expect(page.locator("#queue-connection")).to_have_text("Live", timeout=5000)
        positions[user_id] = int(page.locator("#queue-position").inner_text())
    assert sorted(positions.values()) == [1, 2]
    front = next(u for u, p in positions.items() if p == 1)
    back = next(u for u, p in positions.items() if p == 2)
    status = pages[back].get_by_role("status")
    expect(status).to_contain_text("number 2 in line")
    shot(pages[back], "30-waiting-room-number-2")

    tick = off_loop(admission.admit_shoppers, room_id=sale.pk, now=timezone.now())
    assert len(tick.admitted) == 1

    # No reload by the test: the admitted page moves on to the seat picker by itself ...
    expect(pages[front]).to_have_url(
        f"{room_server.url}/flights/{flight.pk}/seats/?fare=ECONOMY&passengers=1", timeout=5000
    )
    expect(pages[front].get_by_text("You are in!")).to_be_visible()
    # ... and the other's place moves live.
    expect(pages[back].locator("#queue-position")).to_have_text("1", timeout=5000)
    expect(status).to_contain_text("0 people ahead of you")
    shot(pages[back], "31-waiting-room-number-1")


def test_the_shuffle_turns_pre_queue_pages_into_places(room_server, same_prefix):
    flight = small_flight(rows=30)
    opens_at = timezone.now() + timedelta(minutes=5)
    sale = protect(flight, opens_at=opens_at, rate=60, max_inside=1)
    first, second = make_customers(2)
    joining.join_queue(room_id=sale.pk, customer=first)
    joining.join_queue(room_id=sale.pk, customer=second)
    with open_queue(room_server, sale, first) as ws1, open_queue(room_server, sale, second) as ws2:
        before = [json.loads(ws.recv(timeout=5)) for ws in (ws1, ws2)]
        assert [b["status"] for b in before] == ["PREQUEUE", "PREQUEUE"]
        assert before[0]["prequeue"] == 2

        admission.admit_shoppers(room_id=sale.pk, now=opens_at)  # the shuffle

        after = [json.loads(ws.recv(timeout=5)) for ws in (ws1, ws2)]
    assert [a["status"] for a in after] == ["WAITING", "WAITING"]
    assert sorted(a["position"] for a in after) == [1, 2]
    assert sorted(a["orderKey"] for a in after) == [1, 2]


def test_admission_steps_tell_the_admitted_at_once_and_move_the_others_at_the_broadcast(
    room_server, same_prefix
):
    """A tick admits in steps (admission.run_admission_tick): each admitted customer hears at
    their step, on their own channel; the waiting pages move once, at the tick's broadcast,
    by everyone admitted since the last one; and a snapshot in between agrees with them."""
    flight = small_flight(rows=30)
    t0 = timezone.now() - timedelta(seconds=10)
    sale = protect(flight, opens_at=t0, rate=60, max_inside=3)
    customers = make_customers(3)
    for customer in customers:
        joining.join_queue(room_id=sale.pk, customer=customer)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle, no rate credit yet
    with ExitStack() as stack:
        sockets = [stack.enter_context(open_queue(room_server, sale, c)) for c in customers]
        snaps = [json.loads(ws.recv(timeout=5)) for ws in sockets]
        by_place = dict(
            sorted(
                (s["position"], (ws, c)) for s, ws, c in zip(snaps, sockets, customers, strict=True)
            )
        )
        assert list(by_place) == [1, 2, 3]
        (ws1, _c1), (ws2, _c2), (ws3, c3) = by_place[1], by_place[2], by_place[3]

        step = admission.admit_shoppers(
            room_id=sale.pk, now=t0 + timedelta(seconds=1), broadcast=False
        )
        assert len(step.admitted) == 1
        assert json.loads(ws1.recv(timeout=5))["status"] == "ADMITTED"
        step = admission.admit_shoppers(
            room_id=sale.pk, now=t0 + timedelta(seconds=2), broadcast=False
        )
        assert len(step.admitted) == 1
        assert json.loads(ws2.recv(timeout=5))["status"] == "ADMITTED"
        with pytest.raises(TimeoutError):  # no broadcast yet: the last page has not moved
            ws3.recv(timeout=0.5)
        # ... and its snapshot still counts the two admitted ahead, at the old version.
        between = room_selectors.queue_status(room=sale, customer_id=c3.pk)
        assert between["position"] == 3 and between["version"] == snaps[0]["version"]

        last = admission.admit_shoppers(room_id=sale.pk, now=t0 + timedelta(seconds=2))
        assert last.admitted == []  # the broadcast step: no credit left, but it flushes
        moved = json.loads(ws3.recv(timeout=5))
        assert moved["status"] == "WAITING" and moved["position"] == 1
        assert moved["version"] == between["version"] + 1
        after = room_selectors.queue_status(room=sale, customer_id=c3.pk)
        assert (after["position"], after["version"]) == (1, moved["version"])
        with pytest.raises(TimeoutError):  # the admitted pages ignore the broadcast
            ws1.recv(timeout=0.3)


# --- issue 30 in a browser, in each language: the proof-of-work solved by the page's own
# scrypt (progress shown), the place and the units left live, and the sell-out pushed over
# the websocket with the waitlist offered, without a reload; axe on the page.

WORDS = {
    "en": {"left": "Left on sale: 6.", "sold": "Sold out", "wait": "Join the waitlist"},
    "de": {"left": "Noch im Verkauf: 6.", "sold": "Ausverkauft", "wait": "Warteliste"},
    "ru": {"left": "Осталось в продаже: 6.", "sold": "Распродано", "wait": "лист ожидания"},
}


def pow_room():
    flight = small_flight(rows=1, overbook=0)  # 6 units
    room = protect(flight, opens_at=timezone.now() - timedelta(seconds=1), rate=60)
    # Paused: the shuffle happens but nobody is admitted (the page must stay in the queue).
    WaitingRoom.objects.filter(pk=room.pk).update(require_proof_of_work=True, paused=True)
    customer, buyer = make_customers(2)
    return flight, room, customer, buyer


def sell_everything(flight, buyer) -> None:
    booking = hold_seatless(
        customer=buyer, sale_id=flight.sale_id, fare_class="ECONOMY", passengers=6
    )
    with transaction.atomic():
        sell_held_booking(
            Booking.objects.select_for_update().get(pk=booking.pk), now=timezone.now()
        )
    relay_outbox()  # what the worker does when the sale commits: the push to every page


@pytest.mark.browser
@pytest.mark.parametrize(
    ("language", "width", "height"), [("en", 390, 844), ("de", 1366, 900), ("ru", 390, 844)]
)
def test_proof_of_work_place_stock_and_sold_out_in_each_language(
    browser, room_server, same_prefix, language, width, height
):
    flight, room, customer, buyer = off_loop(pow_room)
    client = Client()
    client.force_login(customer)
    context = browser.new_context(
        locale={"en": "en-GB", "de": "de-DE", "ru": "ru-RU"}[language],
        viewport={"width": width, "height": height},
    )
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": room_server.url}]
    )
    page = context.new_page()
    page.goto(f"{room_server.url}/waiting-room/{room.pk}/")
    # The progress line is noted as it is shown (a lucky first try can solve the challenge and
    # leave the page before a poll for it would run); sessionStorage outlives the form's send.
    page.evaluate(
        """() => {
          const line = document.getElementById("pow-progress");
          new MutationObserver(() => {
            if (!line.hidden && line.textContent) {
              sessionStorage.setItem("powShown", line.textContent);
            }
          }).observe(line, {attributes: true, childList: true, characterData: true});
        }"""
    )
    page.click("#join-queue")
    # The browser solves the challenge itself (scrypt, 1 MiB a try), showing its progress.
    expect(page.locator("#queue-status")).to_be_visible(timeout=60000)
    assert page.evaluate("sessionStorage.getItem('powShown')"), "no progress was shown"

    off_loop(admission.admit_shoppers, room_id=room.pk, now=timezone.now())  # the shuffle
    expect(page.locator("#queue-position")).to_have_text("1", timeout=10000)
    expect(page.locator("#queue-stock")).to_have_text(WORDS[language]["left"], timeout=10000)
    assert_no_serious_axe_violations(page)
    shot(page, f"32-waiting-room-stock-{language}")

    off_loop(sell_everything, flight, buyer)
    # No reload: the push says sold out and offers the waitlist; the place is kept.
    sold_out = page.locator("#queue-sold-out")
    expect(sold_out).to_be_visible(timeout=3000)
    expect(sold_out).to_contain_text(WORDS[language]["sold"])
    expect(page.locator("#join-waitlist")).to_be_visible()
    expect(page.locator("#queue-unlikely")).to_contain_text(WORDS[language]["wait"])
    expect(page.locator("#queue-position")).to_have_text("1")
    assert_no_serious_axe_violations(page)
    shot(page, f"33-waiting-room-sold-out-{language}")
    context.close()
