"""Seat map and flight search served as cached JSON bytes with an ETag (issue 12).

The ETag follows the live seat map's per-sale version (`bookings.live`), so any committed
seat change (hold, sale, release) gives a new ETag at once; a matching `If-None-Match` gets
304; a stale one gets 200 with the fresh map.  Holds never read these caches.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from django.core.cache import cache, caches

from flights import selectors
from flights.models import SeatStatus
from kernel import redis_clients
from tests.api.conftest import GOOD_CARD, client_for, pay
from tests.factories import UserFactory, passenger_names

pytestmark = pytest.mark.django_db

HOLD = {"fareClass": "ECONOMY", "seats": ["12A"], "exitRowConfirmed": True}


def seats_of(response) -> dict[str, str]:
    return {s["seatNo"]: s["status"] for s in response.json()["seats"]}


def hold(api, flight, seats, django_capture_on_commit_callbacks):
    # The version is bumped after commit: run the on-commit callbacks as a commit would.
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            "/api/bookings", {**HOLD, "flightId": flight.pk, "seats": seats}, format="json"
        )
    assert response.status_code == 201, response.content
    return response.json()


def test_seat_map_carries_an_etag_and_answers_304_while_nothing_changed(anon, flight):
    first = anon.get(f"/api/flights/{flight.pk}/seats")
    assert first.status_code == 200
    etag = first["ETag"]
    assert etag.startswith('W/"') and f"{flight.pk}." in etag
    assert first["Content-Type"] == "application/json"

    again = anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag
    # The strong form of the same tag and a list containing it match too (weak comparison).
    assert (
        anon.get(
            f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=f'"x", {etag[2:]}'
        ).status_code
        == 304
    )
    assert (
        anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH='"other"').status_code == 200
    )


def test_cached_body_is_what_the_serializer_renders(anon, flight):
    cold = anon.get(f"/api/flights/{flight.pk}/seats")
    warm = anon.get(f"/api/flights/{flight.pk}/seats")
    assert warm.content == cold.content  # the second one came from the cached bytes
    body = warm.json()
    assert body["flightId"] == flight.pk and len(body["seats"]) == 180
    assert body["seats"][0].keys() == {
        "seatNo",
        "row",
        "letter",
        "fareClass",
        "status",
        "surcharge",
        "exitRow",
    }
    assert {f["fareClass"] for f in body["fares"]} == {"BUSINESS", "ECONOMY"}


def test_a_hold_changes_the_etag_and_a_stale_etag_gets_the_fresh_map(
    anon, api, flight, django_capture_on_commit_callbacks
):
    before = anon.get(f"/api/flights/{flight.pk}/seats")
    assert seats_of(before)["12A"] == SeatStatus.AVAILABLE

    hold(api, flight, ["12A"], django_capture_on_commit_callbacks)

    # Well inside the cache time: the version, not the TTL, retires the cached map.
    after = anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200
    assert after["ETag"] != before["ETag"]
    assert seats_of(after)["12A"] == SeatStatus.HELD
    assert (
        anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=after["ETag"]).status_code
        == 304
    )


def test_without_the_version_bump_the_cached_map_would_be_served(
    anon, api, flight, django_capture_on_commit_callbacks
):
    """Control: a seat change whose on-commit announcement never ran (so the version stayed)
    is not seen inside the cache time.  This is what the version check above prevents."""
    before = anon.get(f"/api/flights/{flight.pk}/seats")
    with django_capture_on_commit_callbacks(execute=False):
        api.post("/api/bookings", {**HOLD, "flightId": flight.pk}, format="json")
    stale = anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=before["ETag"])
    assert stale.status_code == 304


@pytest.mark.django_db(transaction=True)
def test_a_sale_changes_the_etag(anon, sandbox_payments, flight):
    customer = UserFactory()
    api = client_for(customer)
    booking = api.post(
        "/api/bookings",
        {**HOLD, "flightId": flight.pk, "passengerNames": passenger_names(1)},
        format="json",
    )
    assert booking.status_code == 201
    held = anon.get(f"/api/flights/{flight.pk}/seats")
    assert seats_of(held)["12A"] == SeatStatus.HELD

    paid = pay(api, booking.json()["bookingId"], paymentMethod=GOOD_CARD)
    assert paid.status_code == 201, paid.content

    sold = anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=held["ETag"])
    assert sold.status_code == 200
    assert sold["ETag"] != held["ETag"]
    assert seats_of(sold)["12A"] == SeatStatus.SOLD


def test_the_hold_path_never_reads_the_cached_maps(
    anon, api, flight, django_capture_on_commit_callbacks
):
    """Poison the cached seat map (every seat shown SOLD, at the current version): the hold
    still asks PostgreSQL and wins.  (test_lean_requests also checks, command by command,
    that a hold sends Redis no read of these keys.)"""
    real = selectors.seat_map_json(flight_id=flight.pk, render=lambda data: b"{}")
    key = selectors.seat_map_meta_key(sale_id=flight.sale_id, flight_id=flight.pk) + ":body"
    cache.set(key, (real.etag, b'{"seats": "all SOLD"}'), 60)
    assert anon.get(f"/api/flights/{flight.pk}/seats").content == b'{"seats": "all SOLD"}'

    hold(api, flight, ["12A"], django_capture_on_commit_callbacks)
    other = client_for(UserFactory())
    lost = other.post("/api/bookings", {**HOLD, "flightId": flight.pk}, format="json")
    assert lost.status_code == 409


def test_after_the_cache_time_one_reader_rebuilds_the_others_serve_the_entry(
    settings, anon, flight
):
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 1}
    first = anon.get(f"/api/flights/{flight.pk}/seats")
    key = selectors.seat_map_meta_key(sale_id=flight.sale_id, flight_id=flight.pk)
    version, etag, built = cache.get(key)
    cache.set(key, (version, etag, built - 5), 60)  # past its cache time
    cache.add(f"{key}:rebuilding", 1, timeout=5)  # somebody else is rebuilding right now
    assert anon.get(f"/api/flights/{flight.pk}/seats").content == first.content
    assert cache.get(key)[2] == built - 5  # not rebuilt by this reader
    cache.delete(f"{key}:rebuilding")
    rebuilt = anon.get(f"/api/flights/{flight.pk}/seats")
    assert rebuilt.json()["generatedAt"] != first.json()["generatedAt"]
    assert rebuilt["ETag"] == first["ETag"]  # nothing changed: same tag, clients keep 304s
    assert cache.get(key)[2] > built


def test_a_304_does_not_fetch_the_body_from_redis(anon, flight, monkeypatch):
    etag = anon.get(f"/api/flights/{flight.pk}/seats")["ETag"]
    asked: list = []
    backend = type(caches["default"])
    get_many, get = backend.get_many, backend.get
    monkeypatch.setattr(
        backend, "get_many", lambda self, keys, **kw: asked.extend(keys) or get_many(self, keys)
    )
    monkeypatch.setattr(
        backend, "get", lambda self, key, *a, **kw: asked.append(key) or get(self, key, *a, **kw)
    )
    # On a single Redis the warm read's MGET goes on the thread's own connection instead.
    own_get_many = redis_clients.cache_get_many
    monkeypatch.setattr(
        redis_clients,
        "cache_get_many",
        lambda keys, **kw: asked.extend(keys) or own_get_many(keys, **kw),
    )
    assert anon.get(f"/api/flights/{flight.pk}/seats", HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert asked and not any(str(k).endswith(":body") for k in asked)
    asked.clear()
    assert anon.get(f"/api/flights/{flight.pk}/seats").status_code == 200
    assert any(str(k).endswith(":body") for k in asked)


def test_a_body_of_another_etag_is_a_miss_not_served(anon, flight):
    """Two rebuilders racing can leave meta and body of different versions for a moment."""
    first = anon.get(f"/api/flights/{flight.pk}/seats")
    key = selectors.seat_map_meta_key(sale_id=flight.sale_id, flight_id=flight.pk) + ":body"
    cache.set(key, ('W/"other"', b'{"old": 1}'), 60)
    again = anon.get(f"/api/flights/{flight.pk}/seats")
    assert again.json()["seats"] == first.json()["seats"]


def test_search_is_cached_bytes_with_an_etag_and_304(anon, flight):
    day = flight.departure_at.astimezone(ZoneInfo(flight.origin.time_zone)).date()
    url = f"/api/flights?from=SGN&to=HAN&date={day.isoformat()}"
    first = anon.get(url)
    assert first.status_code == 200
    assert [f["id"] for f in first.json()] == [flight.pk]
    assert first["ETag"].startswith('W/"s')
    assert anon.get(url).content == first.content
    assert anon.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    assert anon.get(url.replace("SGN", "sgn")).json() == first.json()
    assert anon.get(url.replace("date=", "date=x")).status_code == 400


@pytest.mark.parametrize("query", ["format=xml", "%66ormat=xml", "a=1&format=xml", "f%6Frmat=x"])
def test_a_format_named_in_the_query_is_drfs_answer_however_it_is_spelled(anon, flight, query):
    """DRF answers a format it has no renderer for with 404, however the key is escaped; the
    quick negotiation (kernel/web/negotiation.py) must not skip it."""
    assert anon.get(f"/api/flights/{flight.pk}/seats?{query}").status_code == 404
    assert anon.get(f"/api/flights/{flight.pk}/seats?formats=xml").status_code == 200


def test_control_a_plain_substring_check_would_miss_an_escaped_format(anon, flight, monkeypatch):
    from kernel.web.negotiation import QuickContentNegotiation

    def substring_only(self, request):
        return "format" in request.META.get("QUERY_STRING", "")

    monkeypatch.setattr(QuickContentNegotiation, "_may_name_a_format", substring_only)
    assert anon.get(f"/api/flights/{flight.pk}/seats?%66ormat=xml").status_code == 200
