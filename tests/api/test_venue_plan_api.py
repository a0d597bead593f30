"""The seat-map editor's API (issue 29, item 5): staff read a venue's plan in the editor's
drawn form and save an edited one through the admin editor's own service.  Every refusal is
problem+json and changes nothing: a held seat left out (409, the seat named), a plan saved
since the drawing was read (412), no If-Match (428), a drawing the CSV rules refuse (400),
callers without the venue permissions (401/403)."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth.models import Permission

from bookings.customer_holds import hold_seats
from bookings.models import Seat, SeatStatus
from events.models import Venue, VenueSeat
from tests.api.conftest import client_for, problem
from tests.events.factories import EventFactory, VenueFactory
from tests.events.small_hall import HALL, PRICES, RULES
from tests.factories import StaffFactory, UserFactory

pytestmark = pytest.mark.django_db

PROBLEMS = "https://seatkeeper.dev/problems/"


def on_sale():
    return EventFactory(venue=VenueFactory(plan=HALL), prices=PRICES, assignments=RULES)


def staff_with(*codenames, is_staff=True):
    user = UserFactory(is_staff=is_staff)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


@pytest.fixture
def editor():
    return client_for(staff_with("change_venue"))


def url(venue) -> str:
    return f"/api/venues/{venue.pk}/plan"


def plan_of(venue) -> list[tuple]:
    return sorted(
        VenueSeat.objects.filter(section__venue=venue).values_list(
            "section__name", "row", "number", "x", "y", "accessible", "restricted_view", "quality"
        )
    )


def engine(event) -> dict[str, tuple]:
    return {
        s.seat_no: (s.status, s.booking_id, s.accessible)
        for s in Seat.objects.filter(sale_id=event.sale_id)
    }


def read(client, venue):
    response = client.get(url(venue))
    assert response.status_code == 200, response.content[:300]
    return response


def put(client, venue, body, etag):
    headers = {} if etag is None else {"HTTP_IF_MATCH": etag}
    return client.put(url(venue), body, format="json", **headers)


def stalls(body) -> list[dict]:
    return next(s for s in body["sections"] if s["name"] == "Stalls")["seats"]


def test_staff_read_the_plan_as_drawn_with_its_version_as_etag(editor):
    venue = VenueFactory(plan=HALL)
    response = read(editor, venue)
    body = response.json()
    assert response["ETag"] == f'"venue-{venue.pk}-plan-{body["planVersion"]}"'
    assert set(body) == {"venueId", "planVersion", "stageSide", "sections"}
    assert body["stageSide"] == "TOP" and [s["name"] for s in body["sections"]] == ["Stalls"]
    assert stalls(body)[0] == {
        "row": "1",
        "number": 1,
        "x": 1,
        "y": 1,
        "accessible": False,
        "restrictedView": False,
        "quality": None,
    }


def test_an_edit_on_sale_is_saved_through_the_editors_service_and_the_etag_moves(editor):
    event = on_sale()
    first = read(editor, event.venue)
    body = copy.deepcopy(first.json())
    stalls(body)[0].update(accessible=True, quality=0.5)
    stalls(body).append({"row": "3", "number": 1, "x": 1, "y": 3})
    response = put(editor, event.venue, body, first["ETag"])
    assert response.status_code == 200, response.content[:500]
    saved = response.json()
    assert saved["planVersion"] == first.json()["planVersion"] + 1
    assert response["ETag"] == f'"venue-{event.venue.pk}-plan-{saved["planVersion"]}"'
    assert stalls(saved)[0]["accessible"] and stalls(saved)[0]["quality"] == 0.5
    seats = engine(event)
    assert seats["1-1-1"][2] is True
    assert seats["1-3-1"][0] == SeatStatus.AVAILABLE  # the drawn seat joined the sale
    assert read(editor, event.venue).json() == saved


def test_removing_a_held_seat_is_409_naming_it_and_nothing_changes(editor):
    event = on_sale()
    hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-4"]
    )
    first = read(editor, event.venue)
    body = copy.deepcopy(first.json())
    seats = stalls(body)
    seats.remove(next(s for s in seats if (s["row"], s["number"]) == ("1", 4)))
    seats[0]["accessible"] = True  # with a safe change: refused all the same
    before, engine_before = plan_of(event.venue), engine(event)

    refused = problem(put(editor, event.venue, body, first["ETag"]), 409)

    assert refused["type"] == PROBLEMS + "venue-plan-seats-in-use"
    assert refused["seats"] == ["1-1-4"]
    assert refused["problems"] == [
        f"Stalls row 1 seat 4 is held for {event.name}: a seat held or sold stays in the plan "
        "(not removed, not renumbered)."
    ]
    assert plan_of(event.venue) == before and engine(event) == engine_before
    assert read(editor, event.venue)["ETag"] == first["ETag"]  # the version did not move


def test_control_the_same_removal_of_a_free_seat_is_saved(editor):
    event = on_sale()
    first = read(editor, event.venue)
    body = copy.deepcopy(first.json())
    seats = stalls(body)
    seats.remove(next(s for s in seats if (s["row"], s["number"]) == ("1", 4)))
    assert put(editor, event.venue, body, first["ETag"]).status_code == 200
    assert engine(event)["1-1-4"][0] == SeatStatus.BLOCKED


def test_a_save_over_a_newer_plan_is_412_and_nothing_changes(editor):
    event = on_sale()
    first = read(editor, event.venue)
    mine, theirs = copy.deepcopy(first.json()), copy.deepcopy(first.json())
    stalls(theirs)[1]["restrictedView"] = True
    assert put(editor, event.venue, theirs, first["ETag"]).status_code == 200
    after_theirs = plan_of(event.venue)

    stalls(mine)[0]["accessible"] = True
    stale = problem(put(editor, event.venue, mine, first["ETag"]), 412)

    assert stale["type"] == PROBLEMS + "venue-plan-changed"
    assert stale["planVersion"] == first.json()["planVersion"] + 1
    assert plan_of(event.venue) == after_theirs
    assert not engine(event)["1-1-1"][2]
    # A weak tag never matches (If-Match compares strongly); "*" saves over whatever is there.
    weak = "W/" + read(editor, event.venue)["ETag"]
    assert problem(put(editor, event.venue, mine, weak), 412)["planVersion"] == stale["planVersion"]
    assert put(editor, event.venue, mine, "*").status_code == 200
    assert engine(event)["1-1-1"][2] is True


def test_a_save_without_if_match_is_428_and_nothing_changes(editor):
    venue = VenueFactory(plan=HALL)
    body = copy.deepcopy(read(editor, venue).json())
    stalls(body)[0]["accessible"] = True
    before = plan_of(venue)
    refused = problem(put(editor, venue, body, None), 428)
    assert refused["type"] == PROBLEMS + "plan-version-required"
    assert plan_of(venue) == before
    assert Venue.objects.get(pk=venue.pk).plan_version == 2  # built once by the factory


def test_a_drawing_the_csv_rules_refuse_is_400_with_every_problem(editor):
    venue = VenueFactory(plan=HALL)
    first = read(editor, venue)
    body = copy.deepcopy(first.json())
    stalls(body).append({"row": "1", "number": 1, "x": 7, "y": 1})  # the same seat twice
    stalls(body).append({"row": "1", "number": 5, "x": 0, "y": 1})  # off the grid
    before = plan_of(venue)
    refused = problem(put(editor, venue, body, first["ETag"]), 400)
    assert refused["type"] == PROBLEMS + "invalid-venue-plan"
    assert any('x "0" must be a whole number' in p for p in refused["problems"])
    assert any("row 1 seat 1 is already on" in p for p in refused["problems"])
    assert plan_of(venue) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"sections": "Stalls"}, "sections"),
        ({"sections": [{"name": "Stalls", "seats": [{"row": "1", "number": "one"}]}]}, None),
        ({"stageSide": "UP", "sections": []}, "stageSide"),
    ],
)
def test_a_body_of_the_wrong_shape_is_400_naming_the_field(editor, body, field):
    venue = VenueFactory(plan=HALL)
    before = plan_of(venue)
    refused = problem(put(editor, venue, body, read(editor, venue)["ETag"]), 400)
    names = {p["name"] for p in refused["invalidParams"]}
    assert field in names if field else "sections[0].seats[0].number" in names, names
    assert plan_of(venue) == before


def test_who_may_read_and_save(anon):
    venue = VenueFactory(plan=HALL)
    etag = read(client_for(StaffFactory()), venue)["ETag"]  # a superuser may
    body = read(client_for(StaffFactory()), venue).json()
    before = plan_of(venue)
    customer = client_for(UserFactory())
    plain_staff = client_for(UserFactory(is_staff=True))
    viewer = client_for(staff_with("view_venue"))
    not_staff_with_perm = client_for(staff_with("change_venue", is_staff=False))
    problem(anon.get(url(venue)), 401)
    problem(put(anon, venue, body, etag), 401)
    for client in (customer, plain_staff, not_staff_with_perm):
        problem(client.get(url(venue)), 403)
        problem(put(client, venue, body, etag), 403)
    assert viewer.get(url(venue)).status_code == 200
    problem(put(viewer, venue, body, etag), 403)
    assert plan_of(venue) == before
    assert Venue.objects.get(pk=venue.pk).plan_version == 2


def test_an_unknown_venue_is_404(editor):
    refused = problem(editor.get("/api/venues/987654/plan"), 404)
    assert refused["type"] == PROBLEMS + "venue-not-found"
    problem(put(editor, Venue(pk=987654), {"sections": []}, "*"), 404)
