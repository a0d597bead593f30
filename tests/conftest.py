import pytest
from django.conf import settings

from tests.factories import FlightFactory, StaffFactory, UserFactory


def pytest_configure(config):
    if not settings.USES_POSTGRES:
        raise pytest.UsageError(
            "Seatkeeper's tests run on real PostgreSQL: use ./scripts/test or set DATABASE_URL."
        )


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
