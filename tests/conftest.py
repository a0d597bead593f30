import os

import pytest
from django.conf import settings

from tests.factories import FlightFactory, StaffFactory, UserFactory


def pytest_configure(config):
    if not settings.USES_POSTGRES:
        raise pytest.UsageError(
            "Seatkeeper's tests run on real PostgreSQL: use ./scripts/test or set DATABASE_URL."
        )
    # Factories hash a password per user; PBKDF2 would make a 200-customer test take minutes.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # The Redis hold filters answer some refusals before PostgreSQL does, and tests that fake
    # an expiry by editing rows would meet a still-closed seat gate: they are off unless a test
    # asks for them (tests/flights/test_hold_filters.py), or HOLD_FILTERS_IN_TESTS=1 runs the
    # suite with them on (the concurrency tests must then stay green too).
    if os.environ.get("HOLD_FILTERS_IN_TESTS") == "1":
        return
    settings.HOLD_FILTERS = {
        **settings.HOLD_FILTERS,
        "SEAT_GATE": False,
        "AVAILABILITY_COUNTER": False,
    }


@pytest.fixture
def customer(db):
    return UserFactory()


@pytest.fixture
def other_customer(db):
    return UserFactory()


@pytest.fixture
def staff_user(db):
    return StaffFactory()


@pytest.fixture
def flight(db):
    return FlightFactory()
