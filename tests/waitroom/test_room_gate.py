"""The admission token: required on every hold path of a protected sale (API and pages),
unforgeable, bound to customer and sale, expiring.  And the join limits (429)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from bookings.models import Booking
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining, room_selectors
from waitroom.errors import WaitingRoomRequired
from waitroom.gate import TOKEN_HEADER, cookie_name, require_admission
from waitroom.models import QueueEntry
from waitroom.tokens import issue_token

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def admitted(room_redis):
    """A protected flight, one admitted customer (with their token) and one still waiting."""
    flight = small_flight(rows=30)
    t0 = timezone.now() - timedelta(seconds=2)
    sale = protect(flight, opens_at=t0, rate=60, max_inside=1, stay_seconds=300)
    inside, waiting = make_customers(2)
    joining.join_queue(room_id=sale.pk, customer=inside)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle: one person, order key 1
    joining.join_queue(room_id=sale.pk, customer=waiting)
    tick = admission.admit_shoppers(room_id=sale.pk, now=timezone.now())
    assert len(tick.admitted) == 1
    status = room_selectors.queue_status(room=sale, customer_id=inside.pk)
    assert status["status"] == "ADMITTED"
    return sale, flight, inside, waiting, status["token"]


def hold(client, flight, seat="12A", **headers):
    return client.post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": [seat], "exitRowConfirmed": True},
        format="json",
        **headers,
    )


def assert_waiting_room_required(response, sale):
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"].endswith("/waiting-room-required")
    assert body["queueUrl"] == f"/waiting-room/{sale.pk}/"


def test_the_api_refuses_a_hold_without_a_token_and_accepts_a_valid_one(admitted):
    sale, flight, inside, _waiting, token = admitted
    api = client_for(inside)

    assert_waiting_room_required(hold(api, flight), sale)
    assert not Booking.objects.exists()

    ok = hold(api, flight, HTTP_X_WAITING_ROOM_TOKEN=token)
    assert ok.status_code == 201, ok.json()
    assert Booking.objects.filter(customer=inside).count() == 1


def test_forged_foreign_expired_and_other_sale_tokens_are_refused(admitted):
    sale, flight, inside, waiting, token = admitted
    version, sale_id, customer_id, expiry, signature = token.split(".")
    later = int(expiry) + 3600
    forged = [
        # someone else's admission, presented by the waiting customer
        (waiting, token),
        # the claims rewritten to name the waiting customer, signature kept
        (waiting, f"{version}.{sale_id}.{waiting.pk}.{expiry}.{signature}"),
        # a longer stay, signature kept
        (inside, f"{version}.{sale_id}.{customer_id}.{later}.{signature}"),
        # a flipped signature character
        (inside, token[:-1] + ("A" if token[-1] != "A" else "B")),
        # garbage
        (inside, "wr1.x.y.z.w"),
        (inside, "not a token"),
        # properly signed, but expired
        (
            inside,
            issue_token(
                room_id=sale.pk,
                customer_id=inside.pk,
                expires_at=timezone.now() - timedelta(seconds=1),
            ),
        ),
        # properly signed, for another sale
        (
            inside,
            issue_token(
                room_id=sale.pk + 1,
                customer_id=inside.pk,
                expires_at=timezone.now() + timedelta(minutes=5),
            ),
        ),
    ]
    for customer, bad in forged:
        assert_waiting_room_required(
            hold(client_for(customer), flight, HTTP_X_WAITING_ROOM_TOKEN=bad), sale
        )
    assert not Booking.objects.exists()


def test_a_token_stops_working_when_the_stay_ends(admitted, settings):
    sale, flight, inside, _waiting, token = admitted
    entry = QueueEntry.objects.get(room=sale, customer=inside)

    class Request:
        headers = {TOKEN_HEADER: token}
        COOKIES: dict = {}

    require_admission(request=Request(), customer_id=inside.pk, sale_id=flight.sale_id)
    just_after = entry.admission_expires_at + timedelta(seconds=1)
    with pytest.raises(WaitingRoomRequired) as refused:
        require_admission(
            request=Request(), customer_id=inside.pk, sale_id=flight.sale_id, now=just_after
        )
    assert refused.value.code == "waiting-room-required"


def test_the_seat_picker_form_needs_the_cookie_the_queue_page_sets(admitted):
    sale, flight, inside, waiting, _token = admitted
    form = {"fare_class": "ECONOMY", "passengers": "1", "seats": "14C", "names": "A Person"}
    page = Client()
    page.force_login(waiting)
    refused = page.post(f"/flights/{flight.pk}/hold/", form)
    assert refused.status_code == 302 and refused["Location"] == f"/waiting-room/{sale.pk}/"
    assert not Booking.objects.exists()
    # Not admitted: the enter page sets no cookie and sends them back to the queue.
    back = page.get(f"/waiting-room/{sale.pk}/enter/")
    assert back["Location"] == f"/waiting-room/{sale.pk}/"
    assert cookie_name(sale.pk) not in back.cookies

    page = Client()
    page.force_login(inside)
    entered = page.get(f"/waiting-room/{sale.pk}/enter/")
    assert entered.status_code == 302
    assert entered["Location"].startswith(f"/flights/{flight.pk}/seats/")
    assert entered.cookies[cookie_name(sale.pk)]["httponly"]
    held = page.post(f"/flights/{flight.pk}/hold/", form)
    assert held.status_code == 302 and "/bookings/" in held["Location"], held["Location"]
    assert Booking.objects.filter(customer=inside).count() == 1


def test_unprotected_flights_are_not_affected(room_redis, customer):
    flight = small_flight(rows=30)
    response = hold(client_for(customer), flight)
    assert response.status_code == 201


def test_joins_are_limited_per_account_and_per_address_with_a_clear_429(room_redis, settings):
    settings.WAITING_ROOM = {
        **settings.WAITING_ROOM,
        "JOINS_PER_ACCOUNT_PER_MINUTE": 3,
        "JOINS_PER_ADDRESS_PER_MINUTE": 5,
    }
    flight = small_flight()
    sale = protect(flight)
    bot, *others = make_customers(4)
    api = client_for(bot)
    url = f"/api/waiting-rooms/{sale.pk}/queue"
    answers = [api.post(url, REMOTE_ADDR="10.1.1.1") for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    limited = answers[-1]
    assert limited["Content-Type"] == "application/problem+json"
    assert limited.json()["type"].endswith("/too-many-joins")
    assert 1 <= int(limited["Retry-After"]) <= 61
    # The place was kept: still exactly one entry, the same as before.
    assert QueueEntry.objects.filter(room=sale, customer=bot).count() == 1
    assert api.get(url).json()["status"] in ("PREQUEUE", "WAITING")

    # Other accounts from the same address: the address budget (5) is used up after 1 more
    # (the bot already made 4 attempts from it).
    from_same_address = [
        client_for(c).post(url, REMOTE_ADDR="10.1.1.1").status_code for c in others
    ]
    assert from_same_address == [200, 429, 429]
    # From elsewhere they get in.
    assert client_for(others[1]).post(url, REMOTE_ADDR="10.2.2.2").status_code == 200


def test_the_queue_api_reports_place_token_and_published_seed(admitted):
    sale, _flight, inside, waiting, token = admitted
    mine = client_for(inside).get(f"/api/waiting-rooms/{sale.pk}/queue").json()
    assert mine["status"] == "ADMITTED" and mine["token"] == token
    theirs = client_for(waiting).get(f"/api/waiting-rooms/{sale.pk}/queue").json()
    assert theirs["status"] == "WAITING" and theirs["position"] == 1 and theirs["ahead"] == 0
    info = client_for(waiting).get(f"/api/waiting-rooms/{sale.pk}").json()
    assert info["seed"] == sale.seed and info["shuffledCount"] == 1
    assert client_for(waiting).get("/api/waiting-rooms/999999/queue").status_code == 404
