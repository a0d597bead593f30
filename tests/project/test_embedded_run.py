"""The README's first command, for real: `manage.py serve` on embedded defaults (SQLite,
in-process broker, cache and channel layer) hosts web, worker and beat in one process, and a
booking made over HTTP is paid, confirmed and ticketed by the embedded worker."""

import os
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def embedded_server(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
        and not k.startswith("DJANGO_SECURE_")  # the test suite's own plain-HTTP opt-out
    }
    database = tmp_path / "embedded.sqlite3"
    # No relay kick on commit: the tickets can then only come from beat's one-second relay tick
    # running on the embedded worker, so the test proves web, beat and worker all run.
    env.update(
        # As ./scripts/run sets it: the local demo runs in development mode.
        DJANGO_DEBUG="true",
        DATABASE_URL=f"sqlite:///{database}",
        DEMO_PASSWORD="embedded-demo-pw",
        OUTBOX_KICK_ON_COMMIT="false",
    )
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "--noinput"], ["load_demo", "--days", "2"]):
        subprocess.run(
            [*manage, *command], cwd=ROOT, env=env, check=True, capture_output=True, timeout=300
        )
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [*manage, "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def up():
            try:
                return httpx.get(f"{base}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, timeout=60, what="the embedded server")
        yield base, database
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def test_embedded_server_books_pays_and_tickets_in_one_process(embedded_server):
    base, database = embedded_server
    token = httpx.post(
        f"{base}/api/auth/token", json={"username": "demo", "password": "embedded-demo-pw"}
    ).json()["token"]
    auth = {"Authorization": f"Token {token}"}
    flight = httpx.get(
        f"{base}/api/flights?from=SGN&to=HAN&date={tomorrow_in('Asia/Ho_Chi_Minh')}"
    ).json()
    flight_id = flight[0]["id"] if isinstance(flight, list) else flight["results"][0]["id"]

    hold = httpx.post(
        f"{base}/api/bookings",
        headers=auth,
        json={
            "flightId": flight_id,
            "fareClass": "ECONOMY",
            "seats": ["12A", "12B"],
            "passengerNames": ["Ana Lima", "Bo Chen"],
        },
    )
    assert hold.status_code == 201, hold.text
    booking_id = hold.json()["bookingId"]

    paid = httpx.post(
        f"{base}/api/bookings/{booking_id}/payments",
        headers={**auth, "Idempotency-Key": str(uuid.uuid4())},
        json={"paymentMethod": "4242424242424242"},
    )
    assert paid.status_code in (200, 201), paid.text

    def tickets():
        with sqlite3.connect(database) as db:
            return (
                db.execute(
                    "SELECT COUNT(*) FROM bookings_ticket WHERE booking_id = ?", [booking_id]
                ).fetchone()[0]
                == 2
            )

    # Confirmation writes an outbox event; beat's relay tick runs on the embedded worker, which
    # hands it to the ticket consumer.
    wait_until(tickets, timeout=30, what="tickets issued by beat + the embedded worker")
    detail = httpx.get(f"{base}/api/bookings/{booking_id}", headers=auth).json()
    assert detail["status"] == "CONFIRMED"

    page = httpx.get(f"{base}/")
    assert page.status_code == 200


def tomorrow_in(tz: str) -> str:
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    return (datetime.now(ZoneInfo(tz)) + timedelta(days=1)).date().isoformat()
