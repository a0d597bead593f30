"""Best available without stranding single seats (issue 29, item 1): adjacent seats in one
row with no aisle between, ranked by quality, never leaving a single seat alone unless
nothing else fits; the same rule refuses a customer's own pick (unless staff switch it off);
wheelchair places and companions in one request; the API and the page's button."""

from __future__ import annotations

from decimal import Decimal

import pytest

from bookings import adjacency
from bookings.best_available import hold_best_available
from bookings.customer_holds import hold_seats
from bookings.errors import LeavesSingleSeat, NoAdjacentSeats
from bookings.models import Booking, BookingStatus, Seat, SeatStatus
from events.services import AssignmentSpec, PriceCategorySpec, set_single_seat_rule
from events.venues import import_venue_plan_csv
from tests.api.conftest import client_for, problem
from tests.events.factories import EventFactory, VenueFactory
from tests.factories import FlightFactory, UserFactory, economy_only_layout

pytestmark = pytest.mark.django_db

# Two stretches of four a row (the aisle after seat 4); row 3's seats 1-2 are wheelchair places.
HALL = """
stage: top
Section Stalls: rows 1-3 x seats 1-8; aisle after 4; accessible: row 3 seats 1-2
"""
PRICES = (PriceCategorySpec(code="A", name="Stalls", price=Decimal("50.00")),)


def hall_event(*, rule: bool = True):
    return EventFactory(
        venue=VenueFactory(plan=HALL),
        prices=PRICES,
        assignments=(AssignmentSpec("A", "Stalls"),),
        single_seat_rule=rule,
    )


def seat_nos(booking: Booking) -> list[str]:
    return sorted(Seat.objects.filter(booking=booking).values_list("seat_no", flat=True))


def alone_seats(sale_id: int) -> set[str]:
    """Free seats with no free neighbour, checked on the rows themselves."""
    free = Seat.objects.filter(sale_id=sale_id, status=SeatStatus.AVAILABLE)
    return set().union(*(adjacency.alone(row) for row in adjacency.by_row(free).values()))


def test_best_two_are_side_by_side_nearest_the_stage_centre_and_strand_nobody():
    event = hall_event()
    booking = hold_best_available(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=2
    )
    # 1-1-2 + 1-1-3 would be nearer the centre but leave 1-1-1 and 1-1-4 alone.
    assert seat_nos(booking) == ["1-1-3", "1-1-4"]
    assert booking.status == BookingStatus.HELD and booking.amount == 100
    second = hold_best_available(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=2
    )
    assert seat_nos(second) == ["1-1-5", "1-1-6"]
    assert alone_seats(event.sale_id) == set()


def test_a_block_that_strands_a_seat_only_when_nothing_else_fits():
    event = hall_event()
    # Every stretch of four loses one end: only stretches of three are left.
    taken = [f"1-{row}-{n}" for row in (1, 2, 3) for n in (1, 8)]
    set_single_seat_rule(event_id=event.pk, keep=False)  # staff place these freely
    hold_seats(customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=taken)
    set_single_seat_rule(event_id=event.pk, keep=True)
    booking = hold_best_available(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=2
    )
    assert adjacency.is_block(list(Seat.objects.filter(booking=booking)))
    assert len(alone_seats(event.sale_id)) == 1  # nothing else fitted


def test_a_pick_that_strands_a_seat_is_refused_with_a_suggestion_unless_the_rule_is_off():
    event = hall_event()
    with pytest.raises(LeavesSingleSeat) as refused:
        hold_seats(
            customer=UserFactory(),
            sale_id=event.sale_id,
            fare_class="A",
            seat_numbers=["1-1-2", "1-1-3"],
        )
    assert refused.value.extra["stranded"] == ["1-1-1", "1-1-4"]
    assert refused.value.extra["suggestion"] == ["1-1-3", "1-1-4"]
    assert "1-1-1" in refused.value.detail and "1-1-3, 1-1-4" in refused.value.detail
    assert not Booking.objects.exists()
    set_single_seat_rule(event_id=event.pk, keep=False)
    held = hold_seats(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-1-2"]
    )
    assert seat_nos(held) == ["1-1-2"]


def test_two_wheelchair_places_and_two_companions_are_one_request():
    event = hall_event()
    booking = hold_best_available(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=4, accessible=2
    )
    assert seat_nos(booking) == ["1-3-1", "1-3-2", "1-3-3", "1-3-4"]
    with pytest.raises(NoAdjacentSeats):
        hold_best_available(
            customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=2, accessible=1
        )


def test_on_a_plane_a_party_of_three_never_crosses_the_aisle_and_four_do_not_fit():
    flight = FlightFactory(layout=economy_only_layout(rows=2))
    booking = hold_best_available(
        customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", quantity=3
    )
    assert seat_nos(booking) in (["1A", "1B", "1C"], ["1D", "1E", "1F"])
    with pytest.raises(NoAdjacentSeats):
        hold_best_available(
            customer=UserFactory(), sale_id=flight.sale_id, fare_class="ECONOMY", quantity=4
        )


def test_the_api_holds_the_best_seats_and_says_why_it_cannot(customer):
    event = hall_event()
    client = client_for(customer)
    created = client.post(
        "/api/bookings/best-available",
        {"eventId": event.pk, "category": "a", "quantity": 2},
        format="json",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert sorted(p["seat"] for p in body["passengers"]) == ["1-1-3", "1-1-4"]
    assert created["Location"] == f"/api/bookings/{body['bookingId']}"
    refused = client_for(UserFactory()).post(
        "/api/bookings/best-available",
        {"eventId": event.pk, "category": "A", "quantity": 5},  # stretches are four long
        format="json",
    )
    assert problem(refused, 409)["type"].endswith("no-adjacent-seats")
    bad = client.post(
        "/api/bookings/best-available",
        {"eventId": event.pk, "category": "A", "quantity": 2, "accessible": 3},
        format="json",
    )
    problem(bad, 400)
    assert Booking.objects.count() == 1


def test_the_schema_documents_best_available(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    operation = schema["paths"]["/api/bookings/best-available"]["post"]
    assert operation["operationId"] == "bookings_best_available"
    assert {"201", "400", "409"} <= set(operation["responses"])


def test_the_event_page_has_the_button_and_it_holds(client):
    event = hall_event()
    user = UserFactory()
    client.force_login(user)
    page = client.get(f"/events/{event.pk}/").content.decode()
    assert 'id="best-available"' in page
    response = client.post(
        f"/events/{event.pk}/best-available/",
        {"category": "A", "quantity": "2", "accessible": "0", "name": "Clara Schumann"},
    )
    booking = Booking.objects.get(customer=user)
    assert response.status_code == 302 and response.url == f"/bookings/{booking.pk}/"
    assert seat_nos(booking) == ["1-1-3", "1-1-4"]


def test_staff_set_quality_from_the_plan_ranks_the_seats():
    """A CSV plan's quality column overrides the distance from the stage: here the back row
    is the one staff rate best (say, the front is below the stage's sight line)."""
    venue = VenueFactory(plan="")
    lines = ["section,row,number,x,y,accessible,restricted_view,quality"]
    for y, row in ((1, "A"), (2, "B")):
        for n in range(1, 5):
            lines.append(f"Hall,{row},{n},{n},{y},no,no,{10 - y}")
    import_venue_plan_csv(venue=venue, file="\n".join(lines))
    event = EventFactory(
        venue=venue,
        prices=PRICES,
        assignments=(AssignmentSpec("A", "Hall"),),
        single_seat_rule=True,
    )
    booking = hold_best_available(
        customer=UserFactory(), sale_id=event.sale_id, fare_class="A", quantity=2
    )
    assert seat_nos(booking) in (["1-B-1", "1-B-2"], ["1-B-3", "1-B-4"])


def test_a_pick_that_strands_a_seat_is_allowed_when_nothing_else_fits():
    event = hall_event()
    taken = [f"1-{row}-{n}" for row in (1, 2, 3) for n in (1, 8)]
    set_single_seat_rule(event_id=event.pk, keep=False)
    hold_seats(customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=taken)
    set_single_seat_rule(event_id=event.pk, keep=True)
    # Only stretches of three are left: every pair strands a seat, so this one may.
    held = hold_seats(
        customer=UserFactory(),
        sale_id=event.sale_id,
        fare_class="A",
        seat_numbers=["1-1-2", "1-1-3"],
    )
    assert seat_nos(held) == ["1-1-2", "1-1-3"]
    # A single seat still has places that strand nobody (the ends of a stretch of three).
    with pytest.raises(LeavesSingleSeat) as refused:
        hold_seats(
            customer=UserFactory(), sale_id=event.sale_id, fare_class="A", seat_numbers=["1-2-3"]
        )
    assert len(refused.value.extra["suggestion"]) == 1


def test_the_api_refuses_a_stranding_pick_with_the_suggestion(customer):
    event = hall_event()
    refused = client_for(customer).post(
        "/api/bookings",
        {"eventId": event.pk, "category": "A", "seats": ["1-1-2", "1-1-3"]},
        format="json",
    )
    body = problem(refused, 409)
    assert body["type"].endswith("leaves-single-seat")
    assert body["stranded"] == ["1-1-1", "1-1-4"] and body["suggestion"] == ["1-1-3", "1-1-4"]
    assert not Booking.objects.exists()
