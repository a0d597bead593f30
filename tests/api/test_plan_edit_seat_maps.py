"""Customers' seat maps follow a plan edit (issue 29, item 5): a plan on sale edited by staff
bumps each sale's live seat-map version on commit, so the cached seat map (keyed by the
version, its ETag carrying it) is read anew and open pages hear a `plan` message.  The
control takes the bump out and finds the stale map still served."""

from __future__ import annotations

import copy

import pytest

from bookings.live import current_version
from events import plan_editing
from tests.api.conftest import client_for, problem
from tests.api.test_venue_plan_api import on_sale, stalls
from tests.factories import StaffFactory
from tests.live import SeatMapListener

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff():
    return client_for(StaffFactory())


def seat_map(anon, event, etag=None):
    headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    return anon.get(f"/api/events/{event.pk}/seats", **headers)


def seats_of(response) -> dict[str, dict]:
    return {s["seatNo"]: s for s in response.json()["seats"]}


def edit(staff, event, change):
    first = staff.get(f"/api/venues/{event.venue_id}/plan")
    body = copy.deepcopy(first.json())
    change(stalls(body))
    return staff.put(
        f"/api/venues/{event.venue_id}/plan", body, format="json", HTTP_IF_MATCH=first["ETag"]
    )


def flag_seat_2(seats):
    seats[1].update(accessible=True, restrictedView=True)


def flag_and_add(seats):
    flag_seat_2(seats)
    seats.append({"row": "3", "number": 1, "x": 2, "y": 3})


# Flags alone change no seat's status: only the plan bump moves the version (the control
# below is this case without it).  A new seat also returns to sale, announced as AVAILABLE.
@pytest.mark.parametrize("change", [flag_seat_2, flag_and_add], ids=["flags", "flags+seat"])
def test_an_edit_shows_in_the_cached_seat_map_at_once(
    anon, staff, change, django_capture_on_commit_callbacks
):
    event = on_sale()
    before = seat_map(anon, event)
    assert seat_map(anon, event, before["ETag"]).status_code == 304  # cached and current
    assert not seats_of(before)["1-1-2"]["accessible"]

    with django_capture_on_commit_callbacks(execute=True):
        assert edit(staff, event, change).status_code == 200

    after = seat_map(anon, event, before["ETag"])
    assert after.status_code == 200 and after["ETag"] != before["ETag"]
    seats = seats_of(after)
    assert seats["1-1-2"]["accessible"] and seats["1-1-2"]["restrictedView"]
    if change is flag_and_add:
        assert seats["1-3-1"]["status"] == "AVAILABLE"
        assert (seats["1-3-1"]["x"], seats["1-3-1"]["y"]) == (2, 3)


def test_control_without_the_bump_the_stale_map_is_served(
    anon, staff, monkeypatch, django_capture_on_commit_callbacks
):
    event = on_sale()
    before = seat_map(anon, event)
    monkeypatch.setattr(plan_editing, "announce_plan_change", lambda *, events: None)

    with django_capture_on_commit_callbacks(execute=True):
        assert edit(staff, event, flag_seat_2).status_code == 200

    # Saved (the engine's seat is flagged) but the customers' map does not show it.
    assert seat_map(anon, event, before["ETag"]).status_code == 304
    assert not seats_of(seat_map(anon, event))["1-1-2"]["accessible"]


def test_the_bump_and_the_plan_message_wait_for_commit(staff, django_capture_on_commit_callbacks):
    event = on_sale()
    listener = SeatMapListener(event.sale_id)
    try:
        start = current_version(event.sale_id)
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            assert edit(staff, event, flag_seat_2).status_code == 200
        assert current_version(event.sale_id) == start and listener.next(timeout=0.2) is None
        for callback in callbacks:
            callback()
        message = listener.next(timeout=5)
    finally:
        listener.close()
    assert message["type"] == "plan.changed" and message["version"] == start + 1
    assert current_version(event.sale_id) == start + 1


def test_a_refused_edit_announces_nothing(staff, django_capture_on_commit_callbacks):
    from bookings.customer_holds import hold_seats
    from tests.factories import UserFactory

    event = on_sale()
    hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-1"]
    )
    start = current_version(event.sale_id)
    with django_capture_on_commit_callbacks(execute=True):
        problem(edit(staff, event, lambda seats: seats.pop(0)), 409)
    assert current_version(event.sale_id) == start


def test_the_pages_snapshot_carries_the_plan_version(
    client, staff, django_capture_on_commit_callbacks
):
    event = on_sale()
    before = client.get(f"/events/{event.pk}/seatmap.json").json()
    with django_capture_on_commit_callbacks(execute=True):
        assert edit(staff, event, flag_seat_2).status_code == 200
    after = client.get(f"/events/{event.pk}/seatmap.json").json()
    assert after["planVersion"] == before["planVersion"] + 1
    assert after["version"] > before["version"]
