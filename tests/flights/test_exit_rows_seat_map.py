"""A flight's cabin map follows an exit-row edit in admin (issue 29, item 5 for cabins): the
map flags exit rows without any seat's status moving, so only a plan bump tells the cached
map (keyed by the sale's live version, its ETag carrying it) and open pickers.  The control
takes the bump out and is served the stale map; an edit elsewhere on the flight bumps nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from bookings.live import current_version
from flights import admin as flights_admin
from flights.models import FareInventory
from tests.factories import FlightFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def anon():
    return APIClient()


def seat_map(anon, flight, etag=None):
    headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    return anon.get(f"/api/flights/{flight.pk}/seats", **headers)


def exit_row_flags(response) -> set[int]:
    return {s["row"] for s in response.json()["seats"] if s["exitRow"]}


def change_form(flight, **fields) -> dict:
    form = {
        "code": flight.code,
        "carrier": flight.carrier_id or "",
        "origin": flight.origin_id,
        "destination": flight.destination_id,
        "departure_at_0": flight.departure_at.strftime("%Y-%m-%d"),
        "departure_at_1": flight.departure_at.strftime("%H:%M:%S"),
        "arrival_at_0": flight.arrival_at.strftime("%Y-%m-%d"),
        "arrival_at_1": flight.arrival_at.strftime("%H:%M:%S"),
        "status": flight.status,
        "gate": flight.gate,
        "exit_rows": ", ".join(str(r) for r in flight.exit_rows or ()),
        "inventories-TOTAL_FORMS": "0",
        "inventories-INITIAL_FORMS": "0",
        "inventories-MIN_NUM_FORMS": "0",
        "inventories-MAX_NUM_FORMS": "1000",
        **fields,
    }
    rows = list(FareInventory.objects.filter(sale=flight.sale).order_by("pk"))
    form["inventories-TOTAL_FORMS"] = form["inventories-INITIAL_FORMS"] = str(len(rows))
    for i, row in enumerate(rows):
        form.update(
            {
                f"inventories-{i}-id": row.pk,
                f"inventories-{i}-flight": flight.pk,
                f"inventories-{i}-fare_class": row.fare_class,
                f"inventories-{i}-capacity": row.capacity,
                f"inventories-{i}-overbook_limit": row.overbook_limit,
                f"inventories-{i}-price": row.price,
                f"inventories-{i}-currency": row.currency,
            }
        )
    return form


def save(client, flight, **fields):
    response = client.post(
        reverse("admin:flights_flight_change", args=[flight.pk]), change_form(flight, **fields)
    )
    assert response.status_code == 302, response.content[:3000]


def test_an_exit_row_edit_shows_in_the_cached_seat_map_at_once(
    client, anon, staff_user, django_capture_on_commit_callbacks
):
    flight = FlightFactory()
    client.force_login(staff_user)
    before = seat_map(anon, flight)
    assert seat_map(anon, flight, before["ETag"]).status_code == 304  # cached and current
    new_row = max(s["row"] for s in before.json()["seats"])
    assert new_row not in exit_row_flags(before)

    with django_capture_on_commit_callbacks(execute=True):
        save(client, flight, exit_rows=f"{new_row}")

    after = seat_map(anon, flight, before["ETag"])
    assert after.status_code == 200 and after["ETag"] != before["ETag"]
    assert exit_row_flags(after) == {new_row}


def test_control_without_the_bump_the_stale_map_is_served(
    client, anon, staff_user, monkeypatch, django_capture_on_commit_callbacks
):
    flight = FlightFactory()
    client.force_login(staff_user)
    before = seat_map(anon, flight)
    new_row = max(s["row"] for s in before.json()["seats"])
    monkeypatch.setattr(flights_admin, "announce_cabin_change", lambda *, flight: None)

    with django_capture_on_commit_callbacks(execute=True):
        save(client, flight, exit_rows=f"{new_row}")

    assert seat_map(anon, flight, before["ETag"]).status_code == 304  # the old exit rows


def test_an_edit_that_leaves_the_exit_rows_bumps_nothing(
    client, staff_user, django_capture_on_commit_callbacks
):
    flight = FlightFactory()
    client.force_login(staff_user)
    version = current_version(flight.sale_id)

    with django_capture_on_commit_callbacks(execute=True):
        save(client, flight, gate="B7")

    assert current_version(flight.sale_id) == version
