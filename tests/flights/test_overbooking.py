"""Overbook limits suggested from measured no-shows: the route's history, the suggestion, and
the admin that shows it and changes a limit only when staff confirm it."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from flights import show_up_model
from flights.demo import load_demo
from flights.departure import close_gate
from flights.models import CabinDeparture, FareInventory
from flights.overbooking import (
    MIN_FLIGHTS,
    accept_overbook_suggestion,
    no_show_history,
    suggest_overbook_limit,
)
from kernel.errors import InvalidRequest
from tests.factories import AirportFactory, StaffFactory, UserFactory
from tests.flights.departing import board, seated, seatless, small_flight

pytestmark = pytest.mark.django_db


def departed(*, days_ago: int, sold: int, no_shows: int, capacity: int = 6, **route):
    """A flight of the route that left `days_ago` days ago, with its gate-close record."""
    flight = small_flight(departure_at=timezone.now() - timedelta(days=days_ago), **route)
    return CabinDeparture.objects.create(
        flight=flight,
        fare_class="ECONOMY",
        capacity=capacity,
        overbook_limit=3,
        sold=sold,
        boarded=sold - no_shows,
        no_shows=no_shows,
        recorded_at=flight.departure_at,
    )


def economy(flight):
    return FareInventory.objects.select_related("sale__flight").get(
        sale_id=flight.sale_id, fare_class="ECONOMY"
    )


@pytest.fixture
def upcoming():
    """A flight SGN→HAN in ten days whose route flew five times with 100 sold, 8 no-shows each
    (8 % no-shows; a 6-seat cabin)."""
    for days in range(1, MIN_FLIGHTS + 1):
        departed(days_ago=days, sold=100, no_shows=8)
    return small_flight(departure_at=timezone.now() + timedelta(days=10))


def test_the_history_is_the_routes_and_classs_departures_before_the_flight(upcoming):
    other_route = {"origin": AirportFactory(code="DAD"), "destination": AirportFactory(code="HAN")}
    departed(days_ago=2, sold=50, no_shows=50, **other_route)
    later = small_flight(departure_at=upcoming.departure_at + timedelta(days=1))
    CabinDeparture.objects.create(
        flight=later, fare_class="ECONOMY", capacity=6, overbook_limit=3, sold=9, boarded=0,
        no_shows=9, recorded_at=later.departure_at,
    )  # fmt: skip

    history = no_show_history(flight=upcoming, fare_class="ECONOMY")

    assert (history.flights, history.sold, history.no_shows) == (5, 500, 40)
    assert history.no_show_rate == pytest.approx(0.08)
    assert no_show_history(flight=upcoming, fare_class="BUSINESS").flights == 0


def test_the_suggestion_is_the_binomial_models_for_the_measured_rate(upcoming):
    suggestion = suggest_overbook_limit(inventory=economy(upcoming), target_risk=0.05)

    expected = show_up_model.suggest_overbook_limit(capacity=6, show_rate=0.92, target_risk=0.05)
    assert suggestion.suggested_limit == expected
    assert suggestion.current_limit == 3
    assert suggestion.current_risk == pytest.approx(
        show_up_model.denied_boarding_risk(capacity=6, sold=9, show_rate=0.92)
    )
    assert suggestion.suggested_risk <= 0.05


def test_too_few_departures_give_no_suggestion():
    for days in range(1, MIN_FLIGHTS):
        departed(days_ago=days, sold=100, no_shows=8)
    flight = small_flight(departure_at=timezone.now() + timedelta(days=3))

    suggestion = suggest_overbook_limit(inventory=economy(flight))

    assert suggestion.history.flights == MIN_FLIGHTS - 1
    assert suggestion.suggested_limit is None and suggestion.current_risk is None


def test_gate_close_feeds_the_history_and_volunteers_would_count_as_shows(staff_user):
    flight = small_flight(departure_at=timezone.now() + timedelta(days=1))
    boarded = seated(flight, "1A", "1B", "1C")
    seated(flight, "1D")  # never comes
    standby = seatless(flight)
    for ticket in (*boarded, *standby):
        board(ticket, staff=staff_user, flight=flight)
    close_gate(flight_id=flight.pk)
    upcoming = small_flight(departure_at=timezone.now() + timedelta(days=9))

    history = no_show_history(flight=upcoming, fare_class="ECONOMY")

    assert (history.flights, history.sold, history.boarded, history.no_shows) == (1, 5, 4, 1)


# --- the admin -----------------------------------------------------------------------------


def change_page(client, inventory):
    return client.get(reverse("admin:flights_fareinventory_change", args=[inventory.pk]))


def accept(client, inventory, **extra):
    return client.post(
        reverse("admin:flights_fareinventory_changelist"),
        {"action": "accept_suggestions", "_selected_action": [inventory.pk], **extra},
    )


def test_staff_see_the_suggestion_beside_the_limit_with_its_data(client, upcoming):
    client.force_login(StaffFactory())
    inventory = economy(upcoming)
    suggestion = suggest_overbook_limit(inventory=inventory)

    html = change_page(client, inventory).content.decode()

    assert f'data-suggested="{suggestion.suggested_limit}"' in html
    assert "5 flights, 500 sold, 460 boarded, 40 no-shows (8.0 %)" in html
    assert economy(upcoming).overbook_limit == 3  # looking changes nothing


def test_accepting_shows_the_numbers_first_and_sets_only_what_was_shown(client, upcoming):
    client.force_login(StaffFactory())
    inventory = economy(upcoming)
    suggested = suggest_overbook_limit(inventory=inventory).suggested_limit
    assert suggested != 3

    preview = accept(client, inventory)

    assert preview.status_code == 200
    assert f'name="shown_{inventory.pk}" value="{suggested}"' in preview.content.decode()
    assert economy(upcoming).overbook_limit == 3

    done = accept(client, inventory, confirm="yes", target_risk="0.05", **{
        f"shown_{inventory.pk}": str(suggested)
    })  # fmt: skip

    assert done.status_code == 302
    assert economy(upcoming).overbook_limit == suggested


def test_a_suggestion_that_changed_since_it_was_shown_is_refused(upcoming):
    inventory = economy(upcoming)
    suggested = suggest_overbook_limit(inventory=inventory).suggested_limit

    with pytest.raises(InvalidRequest, match="changed"):
        accept_overbook_suggestion(
            inventory_id=inventory.pk, shown_limit=suggested + 1, target_risk=0.05
        )
    assert economy(upcoming).overbook_limit == 3


def test_another_target_recomputes_the_suggestion(client, upcoming):
    client.force_login(StaffFactory())
    inventory = economy(upcoming)
    loose = suggest_overbook_limit(inventory=inventory, target_risk=0.3).suggested_limit

    page = accept(client, inventory, target_risk="0.3", recompute="1").content.decode()

    assert f'name="shown_{inventory.pk}" value="{loose}"' in page
    bad = accept(client, inventory, target_risk="lots").content.decode()
    assert "The target risk is a number" in bad


def test_accepting_needs_its_permission(client, upcoming):
    clerk = UserFactory(is_staff=True)
    clerk.user_permissions.add(Permission.objects.get(codename="change_fareinventory"))
    client.force_login(clerk)
    inventory = economy(upcoming)
    suggested = suggest_overbook_limit(inventory=inventory).suggested_limit

    response = accept(client, inventory, confirm="yes", **{f"shown_{inventory.pk}": suggested})

    # Without it the action is not offered at all: the POST just shows the list again.
    assert response.status_code == 200
    assert "accept_suggestions" not in response.content.decode()
    assert economy(upcoming).overbook_limit == 3

    clerk.user_permissions.add(Permission.objects.get(codename="accept_overbook_suggestion"))
    client.force_login(type(clerk).objects.get(pk=clerk.pk))
    accept(client, inventory, confirm="yes", **{f"shown_{inventory.pk}": suggested})
    assert economy(upcoming).overbook_limit == suggested


def test_the_demo_carries_departed_flights_so_the_panel_has_suggestions():
    load_demo(days=1, password="pw-for-test")

    suggestions = [
        suggest_overbook_limit(inventory=inventory)
        for inventory in FareInventory.objects.select_related("sale__flight").filter(
            sale__flight__departure_at__gt=timezone.now(), fare_class="ECONOMY"
        )
    ]

    assert suggestions and all(s.suggested_limit is not None for s in suggestions)
    assert all(s.history.flights >= MIN_FLIGHTS for s in suggestions)
