"""The README's first command, for real: `manage.py serve` on embedded defaults (SQLite,
in-process broker, cache and channel layer) hosts web, worker and beat in one process, and a
booking made over HTTP is paid, confirmed and ticketed by the embedded worker."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
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


def embedded_env(database: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
        and not k.startswith(("DJANGO_SECURE_", "WAITING_ROOM_", "HOLD_FILTERS_"))
    }
    # No relay kick on commit: the tickets can then only come from beat's one-second relay tick
    # running on the embedded worker, so the test proves web, beat and worker all run.
    env.update(
        # As ./scripts/run sets it: the local demo runs in development mode.
        DJANGO_DEBUG="true",
        DATABASE_URL=f"sqlite:///{database}",
        DEMO_PASSWORD="embedded-demo-pw",
        OUTBOX_KICK_ON_COMMIT="false",
    )
    return env


def manage(env: dict[str, str], *command: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *command],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout


@contextmanager
def serving(env: dict[str, str], tmp_path: Path):
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
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
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture
def embedded_server(tmp_path):
    database = tmp_path / "embedded.sqlite3"
    env = embedded_env(database)
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo", "--days", "2")
    with serving(env, tmp_path) as base:
        yield base, database


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
            "exitRowConfirmed": True,  # rows 12 and 13 are exit rows
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


PROTECT_A_DEMO_FLIGHT = """
import json
from django.utils import timezone
from flights.models import Flight
from waitroom.staff import open_waiting_room
flight = Flight.objects.filter(code="VN213", status="SCHEDULED").order_by("departure_at").first()
room = open_waiting_room(
    sale_id=flight.sale_id, opens_at=timezone.now(), admit_per_minute=120, max_inside=10
)
print(json.dumps({"room": room.pk, "flight": flight.pk}))
"""


def test_the_embedded_queue_takes_arrivals_admits_by_the_tick_and_the_admitted_hold(tmp_path):
    """Issue 31 item 1: with no REDIS_URL, "Join the queue" answered "Waiting room briefly
    unavailable" forever.  The queue's index is now an in-process Redis in the one embedded
    process: join over the API, beat's admission tick on the embedded worker lets you in,
    and the token holds seats on the protected flight."""
    database = tmp_path / "embedded.sqlite3"
    env = embedded_env(database)
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo", "--days", "2")
    ids = json.loads(manage(env, "shell", "-c", PROTECT_A_DEMO_FLIGHT).strip().splitlines()[-1])
    # Generous timeouts: the first requests of a fresh process on a busy machine are slow.
    http = httpx.Client(timeout=30)
    with serving(env, tmp_path) as base, http:
        token = http.post(
            f"{base}/api/auth/token", json={"username": "demo", "password": "embedded-demo-pw"}
        ).json()["token"]
        auth = {"Authorization": f"Token {token}"}
        queue_url = f"{base}/api/waiting-rooms/{ids['room']}/queue"
        hold = {
            "flightId": ids["flight"],
            "fareClass": "ECONOMY",
            "seats": ["14C"],
            "passengerNames": ["Ana Lima"],
        }
        # Control: the flight really is behind the waiting room.
        refused = http.post(f"{base}/api/bookings", headers=auth, json=hold)
        assert refused.status_code == 403, refused.text
        assert refused.json()["type"].endswith("/waiting-room-required")

        joined = http.post(queue_url, headers=auth)
        assert joined.status_code == 200, joined.text
        assert joined.json()["status"] in ("PREQUEUE", "WAITING")

        def admitted():
            status = http.get(queue_url, headers=auth).json()
            return status if status["status"] == "ADMITTED" else None

        status = wait_until(admitted, timeout=40, what="the embedded admission tick")
        held = http.post(
            f"{base}/api/bookings",
            headers={**auth, "X-Waiting-Room-Token": status["token"]},
            json=hold,
        )
        assert held.status_code == 201, held.text
        assert held.json()["status"] == "HELD"


@pytest.mark.parametrize(
    ("broker", "queue_store"),
    [(None, "memory://"), ("redis://127.0.0.1:1/0", "")],
)
def test_the_in_process_queue_is_chosen_only_for_one_process(tmp_path, broker, queue_store):
    """Several processes (a real broker) cannot share an in-process queue: without a Redis
    for it they get none (503 on join), never one private queue each."""
    env = embedded_env(tmp_path / "unused.sqlite3")
    if broker:
        env["CELERY_BROKER_URL"] = broker
    code = "from django.conf import settings; print(repr(settings.WAITING_ROOM['REDIS_URL']))"
    out = manage(env, "shell", "-c", code).strip().splitlines()[-1]
    assert out == repr(queue_store)
