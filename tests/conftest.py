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
    # Tests speak plain HTTP to 127.0.0.1 (test client, live servers, uvicorn subprocesses),
    # so the HTTPS-only defaults of DEBUG=False are switched off here and for child processes.
    # tests/project/test_security_settings.py checks those defaults without this opt-out.
    for name in ("DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SECURE_COOKIES"):
        os.environ[name] = "false"
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False


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
