"""The queue when Redis dies mid-sale and comes back empty, on a throw-away redis-server of
our own (never the shared one).

The documented choice (docs/architecture.md, "Waiting room"): while Redis is down, joining
answers 503 and writes nothing, waiting customers' place reads answer 503 (the page says
"briefly unavailable, your place is kept"), admission goes on from PostgreSQL, admitted
customers see their token (read from PostgreSQL) and their holds work (HMAC, no Redis).
When Redis comes back empty the index is rebuilt from PostgreSQL: nobody is lost.
"""

from __future__ import annotations

import shutil
import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from bench.stack import ThrowawayRedis
from bookings.models import Booking
from tests.api.conftest import client_for
from tests.waitroom.room_helpers import make_customers, protect, small_flight
from waitroom import admission, joining, room_selectors
from waitroom.errors import QueueUnavailable
from waitroom.models import QueueEntry, QueueStatus

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def own_redis(settings):
    server = ThrowawayRedis()  # bench.stack: the one throw-away redis-server helper
    server.start()
    # One plain server, whatever the run's Redis is (the nightly run's is a cluster).
    settings.WAITING_ROOM = {
        **settings.WAITING_ROOM,
        "REDIS_URL": server.url,
        "REDIS_CLUSTER": False,
    }
    yield server
    server.stop()


def test_redis_dies_mid_sale_and_comes_back_empty(own_redis):
    flight = small_flight(rows=30)
    t0 = timezone.now() - timedelta(seconds=10)
    sale = protect(flight, opens_at=t0, rate=60, max_inside=100, stay_seconds=600)
    customers = make_customers(10)
    for c in customers:
        joining.join_queue(room_id=sale.pk, customer=c)
    admission.admit_shoppers(room_id=sale.pk, now=t0)  # the shuffle
    first_two = admission.admit_shoppers(room_id=sale.pk, now=t0 + timedelta(seconds=2)).admitted
    assert len(first_two) == 2
    waiting = QueueEntry.objects.filter(room=sale, status=QueueStatus.WAITING)
    order_before = list(waiting.order_by("order_key").values_list("customer_id", flat=True))
    assert [
        room_selectors.queue_status(room=sale, customer_id=c)["position"] for c in order_before
    ] == list(range(1, 9))

    own_redis.stop()

    # Joining: 503 with a clear problem, nothing written.
    newcomer = make_customers(1)[0]
    refused = client_for(newcomer).post(f"/api/waiting-rooms/{sale.pk}/queue")
    assert refused.status_code == 503
    assert refused.json()["type"].endswith("/waiting-room-unavailable")
    assert refused["Retry-After"]
    assert not QueueEntry.objects.filter(customer=newcomer).exists()
    # A waiting customer's place: 503 too (the page keeps polling).
    with pytest.raises(QueueUnavailable):
        room_selectors.queue_status(room=sale, customer_id=order_before[0])
    # Admission goes on from PostgreSQL ...
    during = admission.admit_shoppers(room_id=sale.pk, now=t0 + timedelta(seconds=4))
    assert len(during.admitted) == 2
    # ... and those admitted, before or during the outage, get their token and can hold.
    for entry_id in first_two + during.admitted:
        entry = QueueEntry.objects.get(pk=entry_id)
        status = room_selectors.queue_status(room=sale, customer_id=entry.customer_id)
        assert status["status"] == "ADMITTED"
    lucky = QueueEntry.objects.get(pk=during.admitted[0])
    token = room_selectors.queue_status(room=sale, customer_id=lucky.customer_id)["token"]
    held = client_for(lucky.customer).post(
        "/api/bookings",
        {"flightId": flight.pk, "fareClass": "ECONOMY", "seats": ["20C"]},
        format="json",
        HTTP_X_WAITING_ROOM_TOKEN=token,
    )
    assert held.status_code == 201, held.content
    assert Booking.objects.filter(customer=lucky.customer).count() == 1

    own_redis.start()  # empty: no queue, no marker, no counters

    still_waiting = order_before[2:]  # the two at the front were admitted during the outage
    positions = [
        room_selectors.queue_status(room=sale, customer_id=c)["position"] for c in still_waiting
    ]
    assert positions == list(range(1, 7))  # rebuilt from PostgreSQL, same order, no gaps
    for entry_id in first_two + during.admitted:  # nobody admitted is lost
        customer_id = QueueEntry.objects.get(pk=entry_id).customer_id
        assert room_selectors.queue_status(room=sale, customer_id=customer_id)["status"] == (
            "ADMITTED"
        )
    joining.join_queue(room_id=sale.pk, customer=newcomer)
    assert room_selectors.queue_status(room=sale, customer_id=newcomer.pk)["position"] == 7
    after = admission.admit_shoppers(room_id=sale.pk, now=t0 + timedelta(seconds=6))
    assert [QueueEntry.objects.get(pk=i).customer_id for i in after.admitted] == still_waiting[:2]
    assert room_selectors.queue_status(room=sale, customer_id=still_waiting[2])["position"] == 1
