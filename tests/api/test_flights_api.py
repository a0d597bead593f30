import time
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from bookings.customer_holds import hold_seats
from flights.models import Seat
from tests.api.conftest import client_for, problem
from tests.factories import AirportFactory, FlightFactory, economy_only_layout

pytestmark = pytest.mark.django_db


def utc(*args):
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def evening_flights(db):
    """Ho Chi Minh City is UTC+7: 16:30Z is 23:30 on the 20th, 17:30Z is 00:30 on the 21st."""
    late = FlightFactory(code="VN1", departure_at=utc(2026, 12, 20, 16, 30))
    after_midnight = FlightFactory(code="VN2", departure_at=utc(2026, 12, 20, 17, 30))
    early = FlightFactory(code="VN3", departure_at=utc(2026, 12, 19, 17, 0))  # 00:00 local 20th
    return late, after_midnight, early


def test_search_uses_the_origin_local_date(anon, evening_flights):
    late, after_midnight, early = evening_flights
    response = anon.get("/api/flights", {"from": "SGN", "to": "HAN", "date": "2026-12-20"})
    assert response.status_code == 200
    assert [f["id"] for f in response.json()] == [early.pk, late.pk]
    next_day = anon.get("/api/flights", {"from": "sgn", "to": "han", "date": "2026-12-21"}).json()
    assert [f["id"] for f in next_day] == [after_midnight.pk]


def test_search_result_shape(anon, evening_flights):
    (flight,) = [
        f
        for f in anon.get("/api/flights?from=SGN&to=HAN&date=2026-12-20").json()
        if f["code"] == "VN1"
    ]
    assert flight["departureAt"] == "2026-12-20T16:30:00Z"
    assert flight["departureLocal"] == "2026-12-20T23:30:00+07:00"
    assert flight["origin"]["timeZone"] == "Asia/Ho_Chi_Minh"
    fares = {f["fareClass"]: f for f in flight["fares"]}
    assert fares["ECONOMY"] == {
        "fareClass": "ECONOMY",
        "price": "89.00",
        "currency": "EUR",
        "available": 171,
        # A fare class without nested booking classes (docs/fare-classes.md): its own is open.
        "bookingClasses": [],
        "cheapestOpen": {"bookingClass": "", "price": "89.00", "available": 171},
    }
    assert fares["BUSINESS"]["available"] == 12


def test_search_in_a_zone_with_dst_covers_the_local_day(anon):
    fra = AirportFactory(code="FRA", time_zone="Europe/Berlin")
    muc = AirportFactory(code="MUC", time_zone="Europe/Berlin")
    # 29 March 2026: clocks go forward, the local day is 23 hours (22:00Z on the 28th to 22:00Z).
    first = FlightFactory(
        code="LH1", origin=fra, destination=muc, departure_at=utc(2026, 3, 28, 23)
    )
    last = FlightFactory(
        code="LH2", origin=fra, destination=muc, departure_at=utc(2026, 3, 29, 21, 59)
    )
    FlightFactory(code="LH3", origin=fra, destination=muc, departure_at=utc(2026, 3, 29, 22))
    found = anon.get("/api/flights?from=FRA&to=MUC&date=2026-03-29").json()
    assert [f["id"] for f in found] == [first.pk, last.pk]


@pytest.mark.parametrize(
    ("query", "fields"),
    [
        ("", {"from", "to", "date"}),
        ("from=SGN&to=HAN&date=20.12.2026", {"date"}),
        ("from=SGNX&to=HAN&date=2026-12-20", {"from"}),
        ("from=SGN&to=H4N&date=2026-12-20", {"to"}),
    ],
)
def test_search_with_bad_parameters_is_400(anon, query, fields):
    data = problem(anon.get(f"/api/flights?{query}"), 400)
    assert {p["name"] for p in data["invalidParams"]} == fields


@pytest.mark.parametrize("day", ["0001-01-01", "9999-12-31", "1970-01-01"])
def test_search_of_extreme_dates_is_empty_not_an_error(anon, flight, day):
    response = anon.get(f"/api/flights?from=SGN&to=HAN&date={day}")
    assert response.status_code == 200 and response.json() == []


def test_search_of_unknown_airport_is_empty(anon):
    assert anon.get("/api/flights?from=XXX&to=HAN&date=2026-12-20").json() == []


def test_search_is_cached_and_may_be_slightly_stale(anon, customer, evening_flights, settings):
    settings.API_CACHE = {**settings.API_CACHE, "FLIGHT_SEARCH_SECONDS": 1}
    late = evening_flights[0]
    url = "/api/flights?from=SGN&to=HAN&date=2026-12-20"

    def economy_available():
        (found,) = [f for f in anon.get(url).json() if f["id"] == late.pk]
        return next(x["available"] for x in found["fares"] if x["fareClass"] == "ECONOMY")

    assert economy_available() == 171
    hold_seats(customer=customer, sale_id=late.sale_id, fare_class="ECONOMY", seat_numbers=["20A"])
    assert economy_available() == 171  # served from the cache: stale, as the article allows
    time.sleep(1.2)  # the TTL runs out
    assert economy_available() == 170


def test_flight_detail(anon, flight):
    data = anon.get(f"/api/flights/{flight.pk}").json()
    assert data["id"] == flight.pk and data["code"] == flight.code
    assert {f["fareClass"] for f in data["fares"]} == {"ECONOMY", "BUSINESS"}


@pytest.mark.parametrize("suffix", ["", "/seats"])
def test_unknown_flight_is_404(anon, suffix):
    assert problem(anon.get(f"/api/flights/999999{suffix}"), 404)["type"].endswith(
        "/flight-not-found"
    )
    problem(anon.get(f"/api/flights/{10**30}{suffix}"), 404)


def test_seat_map_lists_every_seat_with_its_status(anon, customer, flight):
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    data = anon.get(f"/api/flights/{flight.pk}/seats").json()
    assert data["flightId"] == flight.pk and len(data["seats"]) == 180
    seats = {s["seatNo"]: s for s in data["seats"]}
    assert seats["12A"] == {
        "seatNo": "12A",
        "row": 12,
        "letter": "A",
        "fareClass": "ECONOMY",
        "status": "HELD",
        "surcharge": "15.00",
        "exitRow": True,  # rows 12 and 13
    }
    assert seats["1A"]["exitRow"] is False
    assert seats["1A"]["fareClass"] == "BUSINESS" and seats["1A"]["status"] == "AVAILABLE"


def test_seat_map_shows_a_lapsed_hold_as_available(anon, customer, flight):
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    Seat.objects.filter(booking=booking).update(held_until=timezone.now() - timedelta(seconds=1))
    seats = {s["seatNo"]: s for s in anon.get(f"/api/flights/{flight.pk}/seats").json()["seats"]}
    assert seats["12A"]["status"] == "AVAILABLE"


def test_repeated_seat_map_reads_come_from_the_cache(anon, flight, django_assert_num_queries):
    first = anon.get(f"/api/flights/{flight.pk}/seats")
    with django_assert_num_queries(0):
        second = anon.get(f"/api/flights/{flight.pk}/seats")
    assert second.json() == first.json()


def test_a_hold_never_trusts_the_cached_seat_map(anon, customer, other_customer, flight):
    """The seat map says 12A is free (cached); someone takes it; our hold is still refused."""
    url = f"/api/flights/{flight.pk}/seats"
    anon.get(url)
    hold_seats(
        customer=other_customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    stale = {s["seatNo"]: s["status"] for s in anon.get(url).json()["seats"]}
    assert stale["12A"] == "AVAILABLE"  # the cache really is stale ...

    response = client_for(customer).post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12A"], "exitRowConfirmed": True},
        format="json",
    )
    assert problem(response, 409)["seats"] == ["12A"]  # ... and the hold asked the database
    assert Seat.objects.get(sale=flight.sale, seat_no="12A").booking.customer == other_customer


def test_seat_map_cache_expires_within_seconds(anon, customer, flight, settings):
    settings.API_CACHE = {**settings.API_CACHE, "SEAT_MAP_SECONDS": 1}
    url = f"/api/flights/{flight.pk}/seats"
    anon.get(url)
    hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    time.sleep(1.2)
    fresh = {s["seatNo"]: s["status"] for s in anon.get(url).json()["seats"]}
    assert fresh["12A"] == "HELD"


def test_seatless_only_flight_seat_map(anon):
    flight = FlightFactory(layout=economy_only_layout(rows=2))
    assert len(anon.get(f"/api/flights/{flight.pk}/seats").json()["seats"]) == 12


def test_flight_reads_accept_a_token_too(customer, flight):
    assert client_for(customer).get(f"/api/flights/{flight.pk}/seats").status_code == 200
