"""Liveness answers without touching anything that can be down; readiness names what is down
and never how (the detail goes to the log)."""

import logging
import socket

import pytest
from django.db import connection


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def database_down():
    """The default connection points at a port where nothing listens, for real."""
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict["PORT"] = str(free_port())
    yield
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)


@pytest.mark.django_db
def test_all_up_is_ready(client):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checked": ["broker", "database", "redis"]}


@pytest.mark.django_db(transaction=True)
def test_database_down_healthz_stays_live_readyz_names_it_without_error_text(
    client, database_down, caplog
):
    live = client.get("/healthz")
    # Liveness must not depend on the database (restarting web processes does not fix it),
    # and it never echoes driver errors (issue 11: it used to return the raw text).
    assert live.status_code == 200 and live.json() == {"status": "ok"}

    with caplog.at_level(logging.ERROR, logger="config.health"):
        ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json() == {"status": "unavailable", "down": ["database"]}
    port = connection.settings_dict["PORT"]
    assert port not in ready.content.decode() and "connect" not in ready.content.decode()
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "readiness check database failed" in logged
    assert any(r.exc_info for r in caplog.records)  # the detail is in the log


@pytest.mark.django_db
def test_redis_and_broker_down_are_named(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    response = client.get("/readyz")
    assert response.status_code == 503 and response.json()["down"] == ["redis"]

    settings.CELERY_BROKER_URL = settings.REDIS_URL
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "down": ["broker", "redis"]}
    assert "127.0.0.1" not in response.content.decode()
