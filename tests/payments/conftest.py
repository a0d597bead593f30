"""Payments tests: Celery runs tasks eagerly (in the calling thread, after commit), and the
sandbox delivers webhooks only when a test points it at a live server."""

from __future__ import annotations

import pytest

from config.celery import app as celery_app
from tests.payments.helpers import WEBHOOK_PATH, WEBHOOK_SECRET


@pytest.fixture(autouse=True)
def eager_celery():
    previous = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    # Not propagating: an eager Retry must reach Task.apply, which re-runs the task (Celery
    # skips the countdown when eager; the tests check the countdowns asked for instead).
    celery_app.conf.task_eager_propagates = False
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = previous


@pytest.fixture(autouse=True)
def payment_settings(settings):
    settings.PAYMENTS = {**settings.PAYMENTS, "GATEWAY": "sandbox"}
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "WEBHOOK_SECRET": WEBHOOK_SECRET,
        "DELIVER_WEBHOOKS": False,
        "MAX_RETRIES": 3,
    }
    return settings


@pytest.fixture
def deliver_to_live_server(live_server, settings):
    """Switch the sandbox's webhook delivery on, over real HTTP to the live test server."""
    settings.PAYMENTS_SANDBOX = {
        **settings.PAYMENTS_SANDBOX,
        "DELIVER_WEBHOOKS": True,
        "WEBHOOK_URL": live_server.url + WEBHOOK_PATH,
    }
    return live_server


@pytest.fixture(autouse=True)
def isolated_throttles(settings):
    """The pay endpoint is throttled per user (20/min by default).  These tests pay many times
    in a row, and user ids restart with each test database, so counters from an earlier run
    in the same minute would be found: a key prefix of their own per test, and roomy rates."""
    import uuid

    settings.CACHES = {
        **settings.CACHES,
        "default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "payments": "10000/min",
        },
    }
