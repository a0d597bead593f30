"""/metrics: off unless enabled, guarded, valid Prometheus text, and its numbers move with
what happens: a hold won, a 409, a sale, a 503 under a held lock."""

import re
import threading
import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from bookings.customer_holds import hold_seatless
from bookings.errors import SoldOut
from bookings.models import Booking
from kernel import metrics as kernel_metrics
from kernel.models import OutboxEvent
from tests.api.conftest import client_for
from tests.bookings.confirming import confirm
from tests.factories import FlightFactory, UserFactory, economy_only_layout
from tests.pgbouncer import lock_timeout_for_new_sessions

TOKEN = "metrics-token-for-tests"


@pytest.fixture(autouse=True)
def metrics_on(settings):
    settings.METRICS = {**settings.METRICS, "ENABLED": True, "TOKEN": TOKEN, "ALLOWED_IPS": []}
    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"holds": "10000/min", "payments": "10000/min", "auth": "1/s"},
    }
    return settings


def scrape(client) -> dict:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=")
    samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_are_off_by_default_and_guarded_when_on(client, settings):
    settings.METRICS = {**settings.METRICS, "ENABLED": False}
    assert client.get("/metrics").status_code == 404

    settings.METRICS = {**settings.METRICS, "ENABLED": True, "TOKEN": "", "ALLOWED_IPS": []}
    assert client.get("/metrics").status_code == 403  # neither token nor addresses: refused

    settings.METRICS = {**settings.METRICS, "TOKEN": TOKEN}
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer tökén").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200

    settings.METRICS = {**settings.METRICS, "TOKEN": "", "ALLOWED_IPS": ["10.0.0.0/8"]}
    assert client.get("/metrics").status_code == 403  # the test client is 127.0.0.1
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_counters_move_with_a_hold_a_409_a_sale_and_a_503(client, flight):
    alice, bob = UserFactory(), UserFactory()
    before = scrape(client)

    won = client_for(alice).post(
        "/api/bookings",
        {
            "flightId": flight.pk,
            "fareClass": "ECONOMY",
            "seats": ["12A", "12B"],
            "exitRowConfirmed": True,
        },
        format="json",
    )
    assert won.status_code == 201
    lost = client_for(bob).post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["12B"], "exitRowConfirmed": True},
        format="json",
    )
    assert lost.status_code == 409
    middle = scrape(client)
    assert value(middle, "seatkeeper_live_held_units", flight=f"{flight.code}#{flight.pk}") == 2
    assert value(middle, "seatkeeper_outbox_lag_seconds") >= 0
    assert ("seatkeeper_celery_queue_length", (("queue", "celery"),)) in middle

    confirm(Booking.objects.get(pk=won.json()["bookingId"]))

    # A 503: another transaction holds the seat's row lock longer than our lock_timeout.
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock():
        from django.db import connection as own

        with transaction.atomic():
            list(
                own.cursor().execute(
                    "SELECT id FROM bookings_seat WHERE sale_id = %s AND seat_no = '20A' "
                    "FOR UPDATE",
                    [flight.sale_id],
                )
            )
            locked.set()
            release.wait(20)
        own.close()

    thread = threading.Thread(target=hold_the_lock)
    thread.start()
    try:
        assert locked.wait(10)
        with lock_timeout_for_new_sessions(200):
            busy = client_for(bob).post(
                "/api/bookings",
                {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["20A"]},
                format="json",
            )
    finally:
        release.set()
        thread.join()
    assert busy.status_code == 503

    after = scrape(client)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("seatkeeper_holds_total", outcome="won", reason="") == 1
    assert moved("seatkeeper_holds_total", outcome="lost", reason="seat-unavailable") == 1
    assert moved("seatkeeper_holds_total", outcome="lost", reason="too-busy") == 1
    assert moved("seatkeeper_bookings_confirmed_total") == 1
    assert moved("seatkeeper_units_sold_total") == 2
    route = "api/bookings"
    assert moved("seatkeeper_http_requests_total", route=route, method="POST", status="201") == 1
    assert moved("seatkeeper_http_requests_total", route=route, method="POST", status="409") == 1
    assert moved("seatkeeper_http_requests_total", route=route, method="POST", status="503") == 1
    assert moved("seatkeeper_too_busy_responses_total", route=route) == 1
    assert moved("seatkeeper_http_request_duration_seconds_count", route=route, method="POST") == 3
    # Live holds left the gauge when the booking was sold.
    assert value(after, "seatkeeper_live_held_units", flight=f"{flight.code}#{flight.pk}") == 0
    # No raw paths with ids in any label (a route such as "i18n/setlang/" may hold the id's
    # digit by chance: an id is a path segment of its own).
    assert not any(holds_an_id(dict(k[1]).get("route", ""), flight.pk) for k in after)


@pytest.mark.django_db
def test_sold_out_answers_outbox_lag_and_the_waiting_room_hook(client):
    flight = FlightFactory(layout=economy_only_layout(rows=1, overbook_limit=0))
    for _ in range(6):
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
        )
    before = scrape(client)

    with pytest.raises(SoldOut):
        hold_seatless(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
        )
    from django.db import transaction

    with transaction.atomic():
        OutboxEvent.objects.create(
            sale_id=1,
            aggregate_type="test",
            aggregate_id="1",
            event_type="test.lag",
            payload={},
            created_at=timezone.now() - timedelta(seconds=90),
        )
    kernel_metrics.register_waiting_room(length=lambda: {"flash-sale": 42})
    try:
        kernel_metrics.count("waiting_room_admitted", 5, room="flash-sale")
        after = scrape(client)
    finally:
        kernel_metrics._gauge_sources.pop("waiting_room_length", None)
    assert (
        value(after, "seatkeeper_sold_out_answers_total")
        - value(before, "seatkeeper_sold_out_answers_total")
        == 1
    )
    assert value(after, "seatkeeper_outbox_lag_seconds") >= 90
    assert value(after, "seatkeeper_outbox_backlog") >= 1
    assert value(after, "seatkeeper_waiting_room_length", room="flash-sale") == 42
    assert (
        value(after, "seatkeeper_waiting_room_admitted_total", room="flash-sale")
        - value(before, "seatkeeper_waiting_room_admitted_total", room="flash-sale")
        == 5
    )
    assert value(after, "seatkeeper_live_held_units", flight=f"{flight.code}#{flight.pk}") == 6


def test_a_failing_sink_never_breaks_the_engine():
    def broken(name, amount, labels):
        raise RuntimeError("metrics backend down")

    kernel_metrics.install_sink(broken)
    try:
        kernel_metrics.count("holds", outcome="won")  # no exception
    finally:
        kernel_metrics.remove_sink(broken)


@pytest.mark.django_db
def test_held_units_of_an_event_are_named_by_its_catalogue(client, flight):
    from tests.events.factories import EventFactory

    event = EventFactory()
    hold_seatless(customer=UserFactory(), sale_id=event.sale_id, fare_class="GA-3", passengers=3)
    hold_seatless(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", passengers=1
    )
    samples = scrape(client)
    assert value(samples, "seatkeeper_live_held_units", flight=f"{event.name}#{event.pk}") == 3
    assert value(samples, "seatkeeper_live_held_units", flight=f"{flight.code}#{flight.pk}") == 1


def holds_an_id(route: str, pk: int) -> bool:
    """Whether a route label is a raw path naming `pk` as one of its segments."""
    return re.search(rf"(^|/){pk}(/|$)", route) is not None


def test_the_raw_path_check_finds_an_id_segment_and_only_that():
    assert holds_an_id("api/flights/8/seats", 8)  # control: a raw path is caught
    assert holds_an_id("/api/flights/8", 8)
    assert not holds_an_id("i18n/setlang/", 8)
    assert not holds_an_id("i18n/setlang/", 1)
    assert not holds_an_id("api/flights/<int:flight_id>/seats", 8)
    assert not holds_an_id("api/flights/18/seats", 8)
