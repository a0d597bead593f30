"""Issue 24, item 6: a non-ASCII admission token is a forged one (403 / the queue link),
never a 500 (compare_digest raises on non-ASCII text)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from tests.api.conftest import client_for
from tests.events.factories import EventFactory
from tests.factories import UserFactory
from waitroom.gate import cookie_name
from waitroom.staff import open_waiting_room
from waitroom.tokens import read_token

pytestmark = pytest.mark.django_db

NON_ASCII = "wr1.1.1.9999999999.é"
FORGED = "wr1.1.1.9999999999.e"


@pytest.fixture
def protected_event(room_redis):
    event = EventFactory()
    room = open_waiting_room(
        sale_id=event.sale_id,
        opens_at=timezone.now() - timedelta(minutes=1),
        admit_per_minute=60,
        max_inside=10,
    )
    return event, room


@pytest.mark.parametrize("token", [NON_ASCII, FORGED, "wr1.1.1.١٢٣.x", "é" * 300])
def test_a_non_ascii_token_on_the_api_is_refused_like_a_forged_one(protected_event, token):
    event, room = protected_event
    response = client_for(UserFactory()).post(
        "/api/bookings",
        {"eventId": event.pk, "category": "A", "seats": ["1-1-1"]},
        format="json",
        HTTP_X_WAITING_ROOM_TOKEN=token,
    )
    assert response.status_code == 403, response.content
    assert response.json()["type"].endswith("/waiting-room-required")
    assert response.json()["queueUrl"] == f"/waiting-room/{room.pk}/"


@pytest.mark.parametrize("token", [NON_ASCII, FORGED])
def test_a_non_ascii_cookie_on_the_anonymous_event_page_shows_the_queue(protected_event, token):
    event, room = protected_event
    page = Client()
    page.cookies[cookie_name(room.pk)] = token
    response = page.get(f"/events/{event.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"/waiting-room/{room.pk}/" in html and "seat-input" not in html


def test_the_reader_calls_non_ascii_and_absurd_expiries_forged():
    assert read_token(NON_ASCII) is None
    assert read_token("wr1.1.1.١٢٣.x") is None  # other scripts' digits
