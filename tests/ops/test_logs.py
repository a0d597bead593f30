"""Request ids and JSON logs: one id from the web request into the Celery tasks it caused,
read back from a real worker's JSON log lines."""

import io
import json
import logging

import pytest

from bookings.customer_holds import hold_seats
from config.logs import JsonFormatter, RequestIdFilter
from config.request_id import HEADER
from partners.models import DeliveryStatus, WebhookDelivery
from partners.services import create_endpoint
from tests.api.conftest import client_for
from tests.bookings.test_celery_worker import wait_for
from tests.factories import StaffFactory
from tests.pages.conftest import start_celery_worker, stop_celery_worker
from tests.partners.receiver import Receiver, start_receiver


@pytest.fixture
def json_log():
    """A JSON handler on the root logger, as LOG_FORMAT=json configures it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_request_id_is_accepted_when_sane_and_made_up_otherwise(client, db):
    given = client.get("/healthz", HTTP_X_REQUEST_ID="abc-123_DEF.456")
    assert given[HEADER] == "abc-123_DEF.456"
    for bad in ("short", "x" * 200, 'evil"\n{"level":"ERROR"}', "spaces are bad here"):
        made = client.get("/healthz", HTTP_X_REQUEST_ID=bad)
        assert made[HEADER] != bad and len(made[HEADER]) == 32
    assert client.get("/healthz")[HEADER] != client.get("/healthz")[HEADER]


def test_json_lines_carry_the_request_id(client, db, json_log):
    response = client.get("/no/such/page", HTTP_X_REQUEST_ID="req-json-0001")
    assert response.status_code == 404
    records = lines(json_log.getvalue())
    warning = next(r for r in records if r["logger"] == "django.request")
    assert warning["request_id"] == "req-json-0001" and warning["level"] == "WARNING"
    assert "Not Found" in warning["message"] and warning["status_code"] == 404
    access = next(r for r in records if r["logger"] == "seatkeeper.requests")
    assert access["request_id"] == "req-json-0001"
    assert (access["method"], access["path"], access["route"], access["status"]) == (
        "GET",
        "/no/such/page",
        "unmatched",
        404,
    )
    assert access["duration_ms"] >= 0

    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("test").exception("with a traceback")
    last = lines(json_log.getvalue())[-1]
    assert last["request_id"] == "-" and "ValueError: boom" in last["exc_info"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_one_request_id_from_the_web_request_into_the_worker_tasks_it_caused(
    customer, flight, settings
):
    settings.PARTNER_WEBHOOKS = {**settings.PARTNER_WEBHOOKS, "ALLOW_PRIVATE_URLS": True}
    receiver = Receiver()
    server = start_receiver(receiver)
    endpoint = create_endpoint(
        owner=StaffFactory(), url=receiver.url, event_types=["booking.cancelled"]
    )
    receiver.secret = endpoint.secret
    booking = hold_seats(
        customer=customer, sale_id=flight.sale_id, fare_class="ECONOMY", seat_numbers=["12A"]
    )
    worker = start_celery_worker(
        "json-logs", LOG_FORMAT="json", PARTNER_WEBHOOK_ALLOW_PRIVATE_URLS="true"
    )
    try:
        # The cancel commits a booking.cancelled event; its on_commit kick queues the relay,
        # the relay queues the webhook delivery: two tasks, both caused by this request.
        response = client_for(customer).delete(
            f"/api/bookings/{booking.pk}", HTTP_X_REQUEST_ID="req-cancel-4242"
        )
        assert response.status_code == 200 and response[HEADER] == "req-cancel-4242"
        wait_for(
            lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists(),
            timeout=60,
        )
    finally:
        stop_celery_worker(worker)
        server.shutdown()
        server.server_close()

    records = lines(worker.log.read_text())
    finished = {r["task_name"]: r["request_id"] for r in records if r["message"] == "task finished"}
    assert finished.get("bookings.relay_outbox") == "req-cancel-4242", finished
    assert finished.get("partners.deliver_webhook") == "req-cancel-4242", finished
    assert len(receiver.accepted) == 1
