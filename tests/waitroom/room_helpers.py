"""Shared set-up for the waiting-room tests: a private Redis key prefix per test, sales,
and many customers made fast."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.utils import timezone

from tests.factories import FlightFactory, economy_only_layout
from waitroom import queue, staff
from waitroom.models import WaitingRoom

User = get_user_model()


@pytest.fixture
def room_redis(settings, redis_backend):
    """This test's own key prefix in this run's Redis db, or on the test Redis Cluster (each
    test runs on both): no flush needed, no collisions."""
    prefix = f"wrtest-{uuid.uuid4().hex[:10]}"
    settings.WAITING_ROOM = {**settings.WAITING_ROOM, "KEY_PREFIX": prefix}
    yield prefix
    client = queue.client()
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        client.delete(key)


def make_customers(n: int, tag: str = "") -> list:
    tag = tag or uuid.uuid4().hex[:6]
    password = make_password(None)
    User.objects.bulk_create(
        [User(username=f"q{tag}-{i}", password=password) for i in range(n)], batch_size=1000
    )
    return list(User.objects.filter(username__startswith=f"q{tag}-").order_by("id"))


def small_flight(rows: int = 2, overbook: int = 3):
    """rows x 6 seats + `overbook` seatless units, economy only."""
    return FlightFactory(layout=economy_only_layout(rows=rows, overbook_limit=overbook))


def protect(
    flight,
    *,
    opens_at: datetime | None = None,
    rate: int = 60,
    max_inside: int = 100,
    stay_seconds: int = 600,
) -> WaitingRoom:
    return staff.open_waiting_room(
        sale_id=flight.sale_id,
        opens_at=opens_at or timezone.now() - timedelta(seconds=1),
        admit_per_minute=rate,
        max_inside=max_inside,
        stay_seconds=stay_seconds,
    )


def no_limits(settings) -> None:
    settings.WAITING_ROOM = {
        **settings.WAITING_ROOM,
        "JOINS_PER_ACCOUNT_PER_MINUTE": 10**6,
        "JOINS_PER_ADDRESS_PER_MINUTE": 10**6,
    }
